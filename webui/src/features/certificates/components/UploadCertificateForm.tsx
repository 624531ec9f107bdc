import { Alert, Button, FormActions, TextAreaField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { NAME_HELP } from '@/lib/validation';
import { emptyUploadForm, UPLOAD_FORM_FIELDS, type UploadFormValues, uploadFormSchema } from '../types';

type UploadCertificateFormProps = { onSubmit: (values: UploadFormValues) => Promise<unknown> };

export function UploadCertificateForm({ onSubmit }: UploadCertificateFormProps) {
  const { register, formState, problem, submit } = useServerForm<UploadFormValues>({
    schema: uploadFormSchema,
    defaultValues: emptyUploadForm(),
    fields: UPLOAD_FORM_FIELDS,
    onSubmit,
    onSaved: (_values, form) => form.reset(emptyUploadForm()),
  });
  const { errors } = formState;
  return (
    <form onSubmit={submit} noValidate className="form form-wide" aria-label="Upload a certificate">
      {problem ? <Alert tone="error" title="Not stored">{problem}</Alert> : null}
      <div className="form-row">
        <TextField label="Name" hint={NAME_HELP} error={errors.name?.message} {...register('name')} />
        <TextField label="Description" error={errors.description?.message} {...register('description')} />
      </div>
      <TextAreaField label="Certificate (PEM)" mono rows={6} spellCheck={false} placeholder="-----BEGIN CERTIFICATE-----" error={errors.certificate?.message} {...register('certificate')} />
      <TextAreaField label="Chain (PEM)" mono rows={4} spellCheck={false} hint="Intermediate certificates in order; or the rest of a CA bundle. Optional." error={errors.chain?.message} {...register('chain')} />
      <TextAreaField
        label="Private key (PEM)"
        mono
        rows={6}
        spellCheck={false}
        autoComplete="off"
        hint="Leave empty for a CA bundle. The key is never shown again."
        error={errors.private_key?.message}
        {...register('private_key')}
      />
      <TextField label="Passphrase" type="password" autoComplete="off" hint="Only for an encrypted key; it is not stored." className="field-narrow" error={errors.passphrase?.message} {...register('passphrase')} />
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          Upload certificate
        </Button>
      </FormActions>
    </form>
  );
}
