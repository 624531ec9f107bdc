import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import {
  type DefaultValues,
  type FieldValues,
  type Path,
  type Resolver,
  type UseFormReturn,
  type UseFormSetError,
  useForm,
} from 'react-hook-form';
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

type ServerFormOptions<T extends FieldValues> = {
  /** The zod schema mirroring the API's rules; its output is the form's values. */
  schema: Parameters<typeof zodResolver>[0];
  defaultValues: DefaultValues<T>;
  /** The fields the form shows: server messages for them go next to the field. */
  fields: readonly Path<T>[];
  onSubmit: (values: T) => Promise<unknown>;
  /** After a successful submit, e.g. reset the form for the next entry. */
  onSaved?: (values: T, form: UseFormReturn<T>) => void;
  /** A message for errors that belong to no field (tried before the field mapping). */
  explain?: (error: unknown) => string | null;
};

/**
 * A react-hook-form form validated by a zod schema whose submit sends the values to the
 * API and puts the server's refusals on their fields; `problem` holds what no field owns.
 */
export function useServerForm<T extends FieldValues>(options: ServerFormOptions<T>) {
  const { schema, defaultValues, fields, onSubmit, onSaved, explain } = options;
  const [problem, setProblem] = useState<string | null>(null);
  const form = useForm<T>({ resolver: zodResolver(schema) as unknown as Resolver<T>, defaultValues });
  const submit = form.handleSubmit(async (values) => {
    setProblem(null);
    try {
      await onSubmit(values);
      onSaved?.(values, form);
    } catch (err) {
      setProblem(explain?.(err) ?? showServerErrors(err, form.setError, fields));
    }
  });
  return { ...form, problem, submit };
}
