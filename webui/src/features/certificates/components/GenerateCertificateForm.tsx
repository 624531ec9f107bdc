import { Alert, Button, FormActions, LinesField, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { NAME_HELP } from '@/lib/validation';
import { emptyGenerateForm, GENERATE_FORM_FIELDS, type GenerateFormValues, generateFormSchema, KEY_TYPES } from '../types';

type GenerateCertificateFormProps = { onSubmit: (values: GenerateFormValues) => Promise<unknown> };

export function GenerateCertificateForm({ onSubmit }: GenerateCertificateFormProps) {
  const { register, formState, problem, submit } = useServerForm<GenerateFormValues>({
    schema: generateFormSchema,
    defaultValues: emptyGenerateForm(),
    fields: GENERATE_FORM_FIELDS,
    onSubmit,
    onSaved: (_values, form) => form.reset(emptyGenerateForm()),
  });
  const { errors } = formState;
  return (
    <form onSubmit={submit} noValidate className="form form-wide" aria-label="Generate a self-signed certificate">
      {problem ? <Alert tone="error" title="Not generated">{problem}</Alert> : null}
      <div className="form-row">
        <TextField label="Name" hint={NAME_HELP} error={errors.name?.message} {...register('name')} />
        <TextField label="Description" error={errors.description?.message} {...register('description')} />
      </div>
      <div className="form-row">
        <TextField label="Common name" placeholder="www.example.com" error={errors.common_name?.message} {...register('common_name')} />
        <SelectField label="Key type" options={KEY_TYPES} error={errors.key_type?.message} {...register('key_type')} />
        <TextField label="Valid for (days)" type="number" min={1} max={3650} className="field-narrow" error={errors.days?.message} {...register('days', { valueAsNumber: true })} />
      </div>
      <LinesField label="Subject alternative names" hint="DNS names and IP addresses; empty: the common name." placeholder={'www.example.com\nexample.com'} error={errors.sans?.message} {...register('sans')} />
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          Generate certificate
        </Button>
      </FormActions>
    </form>
  );
}
