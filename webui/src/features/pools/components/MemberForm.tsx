import { zodResolver } from '@hookform/resolvers/zod';
import { useState } from 'react';
import { useForm } from 'react-hook-form';
import { Alert, Button, FormActions, SelectField, TextField } from '@/components';
import { showServerErrors } from '@/lib/forms';
import { MEMBER_FORM_FIELDS, MEMBER_STATES, type MemberFormValues, memberFormSchema } from '../types';

type MemberFormProps = {
  defaultValues: MemberFormValues;
  submitLabel: string;
  onSubmit: (values: MemberFormValues) => Promise<unknown>;
  onCancel?: () => void;
};

export function MemberForm({ defaultValues, submitLabel, onSubmit, onCancel }: MemberFormProps) {
  const [problem, setProblem] = useState<string | null>(null);
  const { register, handleSubmit, setError, reset, setFocus, formState } = useForm<MemberFormValues>({
    resolver: zodResolver(memberFormSchema),
    defaultValues,
  });
  const { errors } = formState;
  const submit = handleSubmit(async (values) => {
    setProblem(null);
    try {
      await onSubmit(values);
      reset(defaultValues);
      setFocus('name');
    } catch (err) {
      setProblem(showServerErrors(err, setError, MEMBER_FORM_FIELDS));
    }
  });
  return (
    <form onSubmit={submit} noValidate className="form form-inline">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <div className="form-row">
        <TextField label="Member name" error={errors.name?.message} {...register('name')} />
        <TextField label="Address" placeholder="10.0.0.21" error={errors.address?.message} {...register('address')} />
        <TextField label="Port" type="number" min={1} max={65535} className="field-narrow" error={errors.port?.message} {...register('port', { valueAsNumber: true })} />
        <TextField label="Weight" type="number" min={0} max={256} className="field-narrow" error={errors.weight?.message} {...register('weight', { valueAsNumber: true })} />
        <SelectField
          label="State"
          options={MEMBER_STATES.map(({ value, label }) => ({ value, label }))}
          error={errors.state?.message}
          {...register('state')}
        />
      </div>
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          {submitLabel}
        </Button>
        {onCancel ? (
          <Button variant="ghost" onClick={onCancel}>
            Cancel
          </Button>
        ) : null}
      </FormActions>
    </form>
  );
}
