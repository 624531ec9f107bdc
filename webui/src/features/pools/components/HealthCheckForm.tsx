import type { ReactNode } from 'react';
import { useWatch } from 'react-hook-form';
import { Alert, Button, FormActions, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { CHECK_METHODS, CHECK_TYPES, healthCheckFormFields, type HealthCheckFormValues, healthCheckFormSchema, isHttpCheck } from '../types';

type HealthCheckFormProps = {
  defaultValues: HealthCheckFormValues;
  submitLabel: string;
  onSubmit: (values: HealthCheckFormValues) => Promise<unknown>;
  extraActions?: ReactNode;
};

const METHOD_OPTIONS = CHECK_METHODS.map((method) => ({ value: method, label: method }));
const BODY_MATCH = [
  { value: 'string', label: 'contains' },
  { value: 'regex', label: 'matches regex' },
] as const;

export function HealthCheckForm({ defaultValues, submitLabel, onSubmit, extraActions }: HealthCheckFormProps) {
  const { register, control, formState, problem, submit } = useServerForm<HealthCheckFormValues>({
    schema: healthCheckFormSchema,
    defaultValues,
    fields: (values) => healthCheckFormFields(values.type),
    onSubmit,
    onSaved: (values, form) => form.reset(values),
  });
  const { errors } = formState;
  const type = useWatch({ control, name: 'type' });
  const number = { valueAsNumber: true } as const;
  return (
    <form onSubmit={submit} noValidate className="form form-wide">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <SelectField label="Check type" options={CHECK_TYPES} error={errors.type?.message} {...register('type')} />
      {isHttpCheck(type) ? (
        <>
          <div className="form-row">
            <SelectField label="Method" className="field-narrow" options={METHOD_OPTIONS} error={errors.method?.message} {...register('method')} />
            <TextField label="Path" placeholder="/health" error={errors.path?.message} {...register('path')} />
            <TextField label="Expected status" type="number" min={100} max={599} className="field-narrow" error={errors.expected_status?.message} {...register('expected_status', number)} />
          </div>
          <TextField label="Host header" hint="Empty sends an HTTP/1.0 request without one." error={errors.host?.message} {...register('host')} />
          <div className="form-row">
            <SelectField label="Body" className="field-narrow" options={BODY_MATCH} error={errors.expect_body_match?.message} {...register('expect_body_match')} />
            <TextField label="Expected body" hint="Empty checks the status only." error={errors.expect_body?.message} {...register('expect_body')} />
          </div>
        </>
      ) : null}
      {type === 'agent' ? (
        <TextField label="Agent port" type="number" min={1} max={65535} className="field-narrow" hint="The TCP port of the load agent on each member." error={errors.agent_port?.message} {...register('agent_port', number)} />
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
