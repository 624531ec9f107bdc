import { type ComponentProps, type ReactNode, useId } from 'react';
import { FieldMessages } from './FieldMessages';
import { describedBy } from './fieldIds';

type TextAreaFieldProps = ComponentProps<'textarea'> & {
  label: string;
  error?: string;
  hint?: ReactNode;
  /** Monospaced, for PEM, HTML and lists of addresses. */
  mono?: boolean;
};

/** A labelled textarea whose hint and error are announced with it. */
export function TextAreaField({ label, error, hint, mono = false, className, rows = 4, ...textarea }: TextAreaFieldProps) {
  const id = useId();
  return (
    <div className={['field', className].filter(Boolean).join(' ')}>
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        rows={rows}
        className={mono ? 'mono' : undefined}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy(id, hint, error)}
        {...textarea}
      />
      <FieldMessages id={id} error={error} hint={hint} />
    </div>
  );
}
