import { zodResolver } from '@hookform/resolvers/zod';
import { type ReactNode, useState } from 'react';
import { useForm } from 'react-hook-form';
import { Alert, Button, FormActions, SelectField, TextField } from '@/components';
import { showServerErrors } from '@/lib/forms';
import { NAME_HELP } from '@/lib/validation';
import { ALGORITHMS, POOL_FORM_FIELDS, type PoolFormValues, poolFormSchema } from '../types';

type PoolFormProps = {
  defaultValues: PoolFormValues;
  submitLabel: string;
  onSubmit: (values: PoolFormValues) => Promise<unknown>;
  extraActions?: ReactNode;
};

export function PoolForm({ defaultValues, submitLabel, onSubmit, extraActions }: PoolFormProps) {
  const [problem, setProblem] = useState<string | null>(null);
  const { register, handleSubmit, setError, reset, formState } = useForm<PoolFormValues>({
    resolver: zodResolver(poolFormSchema),
    defaultValues,
  });
  const { errors } = formState;
  const submit = handleSubmit(async (values) => {
    setProblem(null);
    try {
      await onSubmit(values);
      reset(values);
    } catch (err) {
      setProblem(showServerErrors(err, setError, POOL_FORM_FIELDS));
    }
  });
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
