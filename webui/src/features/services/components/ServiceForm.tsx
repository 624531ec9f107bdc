import { Alert, Button, ButtonLink, CheckboxField, FormActions, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { NAME_HELP } from '@/lib/validation';
import {
  type PoolChoice,
  PROTOCOLS,
  SERVICE_FORM_FIELDS,
  type ServiceFormValues,
  serviceFormSchema,
} from '../types';

type ServiceFormProps = {
  defaultValues: ServiceFormValues;
  pools: readonly PoolChoice[];
  submitLabel: string;
  onSubmit: (values: ServiceFormValues) => Promise<unknown>;
};

export function ServiceForm({ defaultValues, pools, submitLabel, onSubmit }: ServiceFormProps) {
  const { register, formState, problem, submit } = useServerForm<ServiceFormValues>({
    schema: serviceFormSchema,
    defaultValues,
    fields: SERVICE_FORM_FIELDS,
    onSubmit,
  });
  const { errors } = formState;

  return (
    <form onSubmit={submit} noValidate className="form">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <TextField label="Name" hint={NAME_HELP} error={errors.name?.message} {...register('name')} />
      <div className="form-row">
        <TextField label="VIP" hint="The address clients connect to, IPv4 or IPv6." placeholder="10.0.0.10" error={errors.vip?.message} {...register('vip')} />
        <TextField label="Port" type="number" min={1} max={65535} className="field-narrow" error={errors.port?.message} {...register('port', { valueAsNumber: true })} />
      </div>
      <SelectField label="Protocol" options={PROTOCOLS} error={errors.protocol?.message} {...register('protocol')} />
      <SelectField
        label="Pool"
        placeholder={pools.length ? 'Choose a pool…' : 'No pools yet'}
        options={pools.map((pool) => ({ value: String(pool.id), label: pool.name }))}
        hint={pools.length ? undefined : <>Create a pool first: <ButtonLink to="/pools/new" variant="ghost" size="small">New pool</ButtonLink></>}
        error={errors.default_pool?.message}
        {...register('default_pool')}
      />
      <CheckboxField label="Enabled" hint="A disabled virtual service stays configured but does not listen." error={errors.enabled?.message} {...register('enabled')} />
      <TextField label="Description" error={errors.description?.message} {...register('description')} />
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          {submitLabel}
        </Button>
        <ButtonLink to="/services" variant="ghost">
          Cancel
        </ButtonLink>
      </FormActions>
    </form>
  );
}
