import type { FieldValues, Path, UseFormSetError } from 'react-hook-form';
import { errorMessage, fieldErrors } from './api';

/**
 * Puts the API's field messages on the form fields they concern and returns what no field
 * owns (a `detail`, `non_field_errors`, or a field the form does not show).
 */
export function showServerErrors<T extends FieldValues>(
  error: unknown,
  setError: UseFormSetError<T>,
  formFields: readonly Path<T>[],
): string | null {
  const byField = fieldErrors(error);
  const leftovers: string[] = [];
  let placed = 0;
  for (const [field, message] of Object.entries(byField)) {
    if ((formFields as readonly string[]).includes(field)) {
      setError(field as Path<T>, { type: 'server', message }, { shouldFocus: placed === 0 });
      placed += 1;
    } else {
      leftovers.push(field === 'non_field_errors' ? message : `${field}: ${message}`);
    }
  }
  if (leftovers.length > 0) return leftovers.join(' ');
  return placed > 0 ? null : errorMessage(error);
}
