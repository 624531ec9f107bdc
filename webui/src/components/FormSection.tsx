import type { ReactNode } from 'react';

type FormSectionProps = { title: string; description?: ReactNode; children: ReactNode };

/** A titled group of fields within a form (a fieldset, so its legend names the group). */
export function FormSection({ title, description, children }: FormSectionProps) {
  return (
    <fieldset className="form-section">
      <legend>{title}</legend>
      {description ? <p className="form-section-description">{description}</p> : null}
      <div className="form-section-body">{children}</div>
    </fieldset>
  );
}
