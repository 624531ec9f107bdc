import { type ReactNode, useId } from 'react';

type Choice<T extends string> = { value: T; label: string; explain?: ReactNode };

type ChoiceGroupProps<T extends string> = {
  legend: string;
  choices: readonly Choice<T>[];
  value: T;
  onChange: (value: T) => void;
  error?: string;
};

/** One choice out of a few, as radio buttons with a line of explanation each (a labelled group). */
export function ChoiceGroup<T extends string>({ legend, choices, value, onChange, error }: ChoiceGroupProps<T>) {
  const id = useId();
  return (
    <fieldset className="field field-checkbox-list choice-group" aria-describedby={error ? `${id}-error` : undefined}>
      <legend>{legend}</legend>
      {choices.map((choice) => {
        const optionId = `${id}-${choice.value}`;
        return (
          <div className="field-checkbox" key={choice.value}>
            <input
              id={optionId}
              type="radio"
              name={id}
              value={choice.value}
              checked={value === choice.value}
              onChange={() => onChange(choice.value)}
              aria-describedby={choice.explain ? `${optionId}-hint` : undefined}
            />
            <label htmlFor={optionId}>{choice.label}</label>
            {choice.explain ? (
              <p id={`${optionId}-hint`} className="field-hint">
                {choice.explain}
              </p>
            ) : null}
          </div>
        );
      })}
      {error ? (
        <p id={`${id}-error`} className="field-error">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
