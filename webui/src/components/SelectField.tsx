import { type ComponentProps, type ReactNode, useId } from 'react';
import { FieldMessages } from './FieldMessages';
import { describedBy } from './fieldIds';

export type SelectOption = { value: string | number; label: string };

type SelectFieldProps = ComponentProps<'select'> & {
  label: string;
  options: readonly SelectOption[];
  placeholder?: string;
  error?: string;
  hint?: ReactNode;
};

/** A labelled <select>; `placeholder` adds an empty first choice. */
export function SelectField({ label, options, placeholder, error, hint, className, ...select }: SelectFieldProps) {
  const id = useId();
  return (
    <div className={['field', className].filter(Boolean).join(' ')}>
      <label htmlFor={id}>{label}</label>
      <select
        id={id}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        {...select}
      >
        {placeholder !== undefined ? <option value="">{placeholder}</option> : null}
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      <FieldMessages id={id} error={error} hint={hint} />
    </div>
  );
}
