import type { ReactNode } from 'react';

/** The error and hint under a field, with the ids its control's aria-describedby points at. */
export function FieldMessages({ id, error, hint }: { id: string; error?: string; hint?: ReactNode }) {
  return (
    <>
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
    </>
  );
}
