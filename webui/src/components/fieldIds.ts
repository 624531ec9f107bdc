import type { ReactNode } from 'react';

/** The ids of a field's error (first, so it is read first) and hint, for aria-describedby. */
export function describedBy(id: string, hint: ReactNode, error: string | undefined): string | undefined {
  const ids = [error ? `${id}-error` : null, hint ? `${id}-hint` : null].filter(Boolean);
  return ids.length > 0 ? ids.join(' ') : undefined;
}
