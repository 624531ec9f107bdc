import type { ReactNode } from 'react';
import { Alert, Button, FormActions, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { NAME_HELP } from '@/lib/validation';
import { ALGORITHMS, POOL_FORM_FIELDS, type PoolFormValues, poolFormSchema } from '../types';

type PoolFormProps = {
  defaultValues: PoolFormValues;
  submitLabel: string;
  onSubmit: (values: PoolFormValues) => Promise<unknown>;
  extraActions?: ReactNode;
};

export function PoolForm({ defaultValues, submitLabel, onSubmit, extraActions }: PoolFormProps) {
  const { register, formState, problem, submit } = useServerForm<PoolFormValues>({
    schema: poolFormSchema,
    defaultValues,
    fields: POOL_FORM_FIELDS,
    onSubmit,
    onSaved: (values, form) => form.reset(values),
  });
  const { errors } = formState;
  return (
    <form onSubmit={submit} noValidate className="form">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <TextField label="Name" hint={NAME_HELP} error={errors.name?.message} {...register('name')} />
      <SelectField label="Algorithm" options={ALGORITHMS} error={errors.algorithm?.message} {...register('algorithm')} />
      <TextField label="Description" error={errors.description?.message} {...register('description')} />
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          {submitLabel}
        </Button>
        {extraActions}
      </FormActions>
    </form>
  );
}
