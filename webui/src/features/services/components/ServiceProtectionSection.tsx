import { type UseFormReturn, useWatch } from 'react-hook-form';
import { CheckboxField, FormSection, LinesField, SelectField, TextField } from '@/components';
import { FORWARDED, type ServiceFormValues } from '../types';

type SectionProps = { form: UseFormReturn<ServiceFormValues>; http: boolean };

const number = { valueAsNumber: true } as const;

/** Who may connect, how much, and (for HTTP) what is done to requests and responses. */
export function ServiceProtectionSection({ form, http }: SectionProps) {
  const { register, control, formState } = form;
  const { errors } = formState;
  const compression = useWatch({ control, name: 'compression' });
  return (
    <FormSection title="Protection" description="0 means no limit throughout.">
      <div className="form-row">
        <LinesField label="Allowed sources" hint="Addresses or CIDR blocks; empty allows everyone." placeholder="10.0.0.0/8" error={errors.allow_cidrs?.message} {...register('allow_cidrs')} />
        <LinesField label="Denied sources" hint="Refused even when allowed above." placeholder="192.0.2.0/24" error={errors.deny_cidrs?.message} {...register('deny_cidrs')} />
      </div>
      <div className="form-row">
        <TextField label="Connections per source" type="number" min={0} error={errors.conn_limit?.message} {...register('conn_limit', number)} />
        <TextField label="Max connections" type="number" min={0} hint="For the whole service." error={errors.max_connections?.message} {...register('max_connections', number)} />
      </div>
      {http ? (
        <>
          <div className="form-row">
            <TextField label="Requests per source" type="number" min={0} hint="Beyond it: 429." error={errors.rate_limit_requests?.message} {...register('rate_limit_requests', number)} />
            <TextField label="Rate period (s)" type="number" min={1} max={3600} error={errors.rate_limit_period_s?.message} {...register('rate_limit_period_s', number)} />
            <TextField label="Max request body (bytes)" type="number" min={0} hint="Larger bodies: 413." error={errors.max_body_bytes?.message} {...register('max_body_bytes', number)} />
          </div>
          <SelectField label="Client address header" options={FORWARDED} hint="How members learn the client's address." error={errors.forwarded?.message} {...register('forwarded')} />
          <CheckboxField label="Compress responses" error={errors.compression?.message} {...register('compression')} />
          {compression ? (
            <LinesField label="Compressed media types" error={errors.compression_types?.message} {...register('compression_types')} />
          ) : null}
        </>
      ) : null}
    </FormSection>
  );
}
