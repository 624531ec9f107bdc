import { type ReactNode, useId } from 'react';
import { FieldMessages } from './FieldMessages';
import { describedBy } from './fieldIds';
import type { SelectOption } from './SelectField';

type CheckboxListFieldProps = {
  label: string;
  options: readonly SelectOption[];
  /** The checked options' values (as strings). */
  value: readonly string[];
  onChange: (value: string[]) => void;
  error?: string;
  hint?: ReactNode;
  /** Said instead of the list when there is nothing to choose. */
  empty?: ReactNode;
};

/** Several choices out of a list, as checkboxes in a labelled group (use with a Controller). */
export function CheckboxListField({ label, options, value, onChange, error, hint, empty }: CheckboxListFieldProps) {
  const id = useId();
  const toggle = (option: string, checked: boolean) =>
    onChange(checked ? [...value, option] : value.filter((item) => item !== option));
  return (
    <fieldset className="field field-checkbox-list" aria-describedby={describedBy(id, hint, error)} aria-invalid={error ? true : undefined}>
      <legend>{label}</legend>
      {options.length === 0 && empty ? <p className="field-hint">{empty}</p> : null}
      {options.map((option) => {
        const optionId = `${id}-${option.value}`;
        return (
          <div className="field-checkbox" key={option.value}>
            <input
              id={optionId}
              type="checkbox"
              checked={value.includes(String(option.value))}
              onChange={(event) => toggle(String(option.value), event.target.checked)}
            />
            <label htmlFor={optionId}>{option.label}</label>
          </div>
        );
      })}
      <FieldMessages id={id} error={error} hint={hint} />
    </fieldset>
  );
}
