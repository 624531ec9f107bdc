import { type ComponentProps, type ReactNode, useId } from 'react';
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
      {error ? (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      ) : null}
      {hint ? (
        <p id={`${id}-hint`} className="field-hint">
          {hint}
        </p>
      ) : null}
    </div>
  );
}
