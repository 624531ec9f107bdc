import type { ReactNode } from 'react';
import { useWatch } from 'react-hook-form';
import { Alert, Button, FormActions, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { HEALTH_CHECK_FORM_FIELDS, type HealthCheckFormValues, healthCheckFormSchema } from '../types';

const CHECK_TYPES = [
  { value: 'tcp', label: 'TCP connect' },
  { value: 'http', label: 'HTTP GET' },
] as const;

type HealthCheckFormProps = {
  defaultValues: HealthCheckFormValues;
  submitLabel: string;
  onSubmit: (values: HealthCheckFormValues) => Promise<unknown>;
  extraActions?: ReactNode;
};

export function HealthCheckForm({ defaultValues, submitLabel, onSubmit, extraActions }: HealthCheckFormProps) {
  const { register, control, formState, problem, submit } = useServerForm<HealthCheckFormValues>({
    schema: healthCheckFormSchema,
    defaultValues,
    fields: HEALTH_CHECK_FORM_FIELDS,
    onSubmit,
    onSaved: (values, form) => form.reset(values),
  });
  const { errors } = formState;
  const isHttp = useWatch({ control, name: 'type' }) === 'http';
  const number = { valueAsNumber: true } as const;
  return (
    <form onSubmit={submit} noValidate className="form">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <SelectField label="Check type" options={CHECK_TYPES} error={errors.type?.message} {...register('type')} />
      {isHttp ? (
        <div className="form-row">
          <TextField label="Path" placeholder="/health" error={errors.path?.message} {...register('path')} />
          <TextField label="Expected status" type="number" min={100} max={599} className="field-narrow" error={errors.expected_status?.message} {...register('expected_status', number)} />
          <TextField label="Host header" hint="Empty sends an HTTP/1.0 request without one." error={errors.host?.message} {...register('host')} />
        </div>
      ) : null}
      <div className="form-row">
        <TextField label="Interval (ms)" type="number" min={100} className="field-narrow" error={errors.interval_ms?.message} {...register('interval_ms', number)} />
        <TextField label="Timeout (ms)" type="number" min={100} className="field-narrow" error={errors.timeout_ms?.message} {...register('timeout_ms', number)} />
        <TextField label="Rise" type="number" min={1} max={100} className="field-narrow" hint="Passes to mark up." error={errors.rise?.message} {...register('rise', number)} />
        <TextField label="Fall" type="number" min={1} max={100} className="field-narrow" hint="Failures to mark down." error={errors.fall?.message} {...register('fall', number)} />
      </div>
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          {submitLabel}
        </Button>
        {extraActions}
      </FormActions>
    </form>
  );
}
