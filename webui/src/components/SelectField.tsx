import { type ComponentProps, type ReactNode, useId } from 'react';
import { FieldMessages } from './FieldMessages';
import { describedBy } from './fieldIds';

/** A choice; options sharing a `group` are shown under it (an <optgroup>). */
export type SelectOption = { value: string | number; label: string; group?: string };

type SelectFieldProps = ComponentProps<'select'> & {
  label: string;
  options: readonly SelectOption[];
  placeholder?: string;
  error?: string;
  hint?: ReactNode;
};

function renderOption(option: SelectOption) {
  return (
    <option key={option.value} value={option.value}>
      {option.label}
    </option>
  );
}

/** Consecutive options of one group under its <optgroup>; options without a group stay flat. */
function renderOptions(options: readonly SelectOption[]) {
  const runs: { group?: string; options: SelectOption[] }[] = [];
  for (const option of options) {
    const last = runs.at(-1);
    if (last && last.group === option.group) last.options.push(option);
    else runs.push({ group: option.group, options: [option] });
  }
  return runs.map((run, index) =>
    run.group ? (
      <optgroup key={`${run.group}-${index}`} label={run.group}>
        {run.options.map(renderOption)}
      </optgroup>
    ) : (
      run.options.map(renderOption)
    ),
  );
}

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
        {renderOptions(options)}
      </select>
      <FieldMessages id={id} error={error} hint={hint} />
    </div>
  );
}
