import { type UseFormReturn, useFieldArray, useWatch } from 'react-hook-form';
import { Button, FormSection, SelectField, TextAreaField, TextField } from '@/components';
import { emptyErrorPage, ERROR_PAGE_STATUSES, type ServiceFormValues } from '../types';

const STATUS_OPTIONS = ERROR_PAGE_STATUSES.map((status) => ({ value: String(status), label: String(status) }));

/** Custom pages HAProxy answers with instead of its own, one per status. */
export function ErrorPagesEditor({ form }: { form: UseFormReturn<ServiceFormValues> }) {
  const { register, control, formState } = form;
  const { fields, append, remove } = useFieldArray({ control, name: 'error_pages' });
  const pages = useWatch({ control, name: 'error_pages' });
  const errors = formState.errors.error_pages;
  const sectionError = errors?.message ?? errors?.root?.message;
  return (
    <FormSection title="Error pages" description="Answered instead of HAProxy's own page for that status.">
      {sectionError ? <p className="field-error">{sectionError}</p> : null}
      {fields.length === 0 ? <p className="muted">None: HAProxy's pages are used.</p> : null}
      {fields.map((field, index) => (
        <div key={field.id} className="row-editor" role="group" aria-label={`Error page ${index + 1}`}>
          <div className="row-editor-header">
            <h4>Error page {index + 1}</h4>
            <Button variant="ghost" size="small" className="button-danger-text" onClick={() => remove(index)} aria-label={`Remove error page ${index + 1}`}>
              Remove
            </Button>
          </div>
          <div className="form-row">
            <SelectField label="Status" className="field-narrow" options={STATUS_OPTIONS} error={errors?.[index]?.status?.message} {...register(`error_pages.${index}.status`)} />
            <TextField label="Content type" error={errors?.[index]?.content_type?.message} {...register(`error_pages.${index}.content_type`)} />
          </div>
          <TextAreaField label="Body" mono rows={5} spellCheck={false} error={errors?.[index]?.body?.message} {...register(`error_pages.${index}.body`)} />
        </div>
      ))}
      <div>
        <Button size="small" onClick={() => append(emptyErrorPage((pages ?? []).map((page) => page.status)))}>
          Add error page
        </Button>
      </div>
    </FormSection>
  );
}
