import { type ComponentProps, type ReactNode, useId } from 'react';
import { FieldMessages } from './FieldMessages';
import { describedBy } from './fieldIds';

type CheckboxFieldProps = Omit<ComponentProps<'input'>, 'type'> & {
  label: string;
  error?: string;
  hint?: ReactNode;
};

export function CheckboxField({ label, error, hint, className, ...input }: CheckboxFieldProps) {
  const id = useId();
  return (
    <div className={['field field-checkbox', className].filter(Boolean).join(' ')}>
      <input id={id} type="checkbox" aria-describedby={describedBy(id, hint, error)} {...input} />
      <label htmlFor={id}>{label}</label>
      <FieldMessages id={id} error={error} hint={hint} />
    </div>
  );
}
