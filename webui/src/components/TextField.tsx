import { type ComponentProps, type ReactNode, useId } from 'react';
import { FieldMessages } from './FieldMessages';
import { describedBy } from './fieldIds';

type TextFieldProps = ComponentProps<'input'> & {
  label: string;
  error?: string;
  hint?: ReactNode;
};

/** A labelled input whose hint and error are announced with it (aria-describedby). */
export function TextField({ label, error, hint, className, ...input }: TextFieldProps) {
  const id = useId();
  return (
    <div className={['field', className].filter(Boolean).join(' ')}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        {...input}
      />
      <FieldMessages id={id} error={error} hint={hint} />
    </div>
  );
}
