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
import { describeSubPath, errorMessage, type ServerFieldError, serverFieldErrors } from './api';

/** Turns a server message's path into the form's terms (e.g. an error page's status into its row). */
export type ServerPathTranslator = (path: string[]) => string[];

// The compiler names the other object a non-field message concerns before a colon
// ("pools/web/members/s1/port: direct-routing cannot change the port", "nodes/lb2/address:
// needed: HA group front has peers"). Translators see it as `['non_field_errors', 'pools',
// 'web', 'members', 's1', 'port']` and may move it to the field whose choice caused it;
// left where it is, the message is shown whole.
const OBJECT_PATH = /^((?:pools|virtual-services|certificates|nodes|ha-groups)\/[^\s:]+): ([\s\S]+)$/;

function withObjectPath(entry: ServerFieldError): ServerFieldError {
  const match = entry.path.length === 1 && entry.path[0] === 'non_field_errors' ? OBJECT_PATH.exec(entry.message) : null;
  return match ? { path: ['non_field_errors', ...match[1]!.split('/')], message: match[2]! } : entry;
}

/**
 * Puts the API's field messages on the form fields they concern and returns what no field
 * owns (a `detail`, `non_field_errors`, or a field the form does not show).
 *
 * A message goes to the deepest field the form shows along its path
 * (`persistence.cookie_name`, `conditions.0.values`); what is left of the path stays in
 * the message ("Entry 2: not an address or CIDR block: 'x'").
 */
export function showServerErrors<T extends FieldValues>(
  error: unknown,
  setError: UseFormSetError<T>,
  formFields: readonly Path<T>[],
  translate: ServerPathTranslator = (path) => path,
): string | null {
  const shown = new Set<string>(formFields);
  const byField = new Map<string, string[]>();
  const leftovers: string[] = [];
  for (const entry of serverFieldErrors(error)) {
    const located = withObjectPath(entry);
    const path = translate(located.path);
    let depth = path.length;
    while (depth > 0 && !shown.has(path.slice(0, depth).join('.'))) depth -= 1;
    const rest = path.slice(depth);
    const message = rest.length ? `${describeSubPath(rest)}: ${located.message}` : located.message;
    if (depth > 0) {
      const field = path.slice(0, depth).join('.');
      byField.set(field, [...(byField.get(field) ?? []), message]);
    } else {
      leftovers.push(entry.path[0] === 'non_field_errors' ? entry.message : `${describeSubPath(path)}: ${entry.message}`);
    }
  }
  let placed = 0;
  for (const [field, messages] of byField) {
    setError(field as Path<T>, { type: 'server', message: messages.join(' ') }, { shouldFocus: placed === 0 });
    placed += 1;
  }
  if (leftovers.length > 0) return leftovers.join(' ');
  return placed > 0 ? null : errorMessage(error);
}

type ServerFormOptions<T extends FieldValues> = {
  /** The zod schema mirroring the API's rules; its output is the form's values. */
  schema: Parameters<typeof zodResolver>[0];
  defaultValues: DefaultValues<T>;
  /**
   * The fields the form shows: server messages for them go next to the field. A function
   * gets the submitted values, for forms whose sections or rows depend on them.
   */
  fields: readonly Path<T>[] | ((values: T) => readonly Path<T>[]);
  /** Maps server paths that do not follow the form's layout (see `showServerErrors`). */
  translate?: (path: string[], values: T) => string[];
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
  const { schema, defaultValues, fields, translate, onSubmit, onSaved, explain } = options;
  const [problem, setProblem] = useState<string | null>(null);
  const form = useForm<T>({ resolver: zodResolver(schema) as unknown as Resolver<T>, defaultValues });
  const submit = form.handleSubmit(async (values) => {
    setProblem(null);
    try {
      await onSubmit(values);
      onSaved?.(values, form);
    } catch (err) {
      const shown = typeof fields === 'function' ? fields(values) : fields;
      const toFormPath = translate && ((path: string[]) => translate(path, values));
      setProblem(explain?.(err) ?? showServerErrors(err, form.setError, shown, toFormPath));
    }
  });
  return { ...form, problem, submit };
}
