import type { ComponentProps, ReactNode } from 'react';
import { TextAreaField } from './TextAreaField';

type LinesFieldProps = Omit<ComponentProps<typeof TextAreaField>, 'hint'> & { hint?: ReactNode };

/**
 * A list of strings typed one per line (addresses, media types, match values). The form
 * keeps the text; `splitLines` from `@/lib/validation` turns it into the API's list.
 */
export function LinesField({ hint, rows = 3, ...props }: LinesFieldProps) {
  return <TextAreaField mono spellCheck={false} rows={rows} hint={hint ? <>One per line. {hint}</> : 'One per line.'} {...props} />;
}
