import type { ReactNode } from 'react';
import { type UseFormReturn, useWatch } from 'react-hook-form';
import { Alert, Button, CheckboxField, FormActions, FormSection, SelectField, TextAreaField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { NAME_HELP } from '@/lib/validation';
import { ALGORITHMS, type CertificateChoice, HTTP_REUSE, poolFormFields, type PoolFormValues, poolFormSchema, PROXY_PROTOCOLS } from '../types';
import { PersistenceSection } from './PersistenceSection';

type PoolFormProps = {
  defaultValues: PoolFormValues;
  certificates: readonly CertificateChoice[];
  submitLabel: string;
  onSubmit: (values: PoolFormValues) => Promise<unknown>;
  extraActions?: ReactNode;
};

const number = { valueAsNumber: true } as const;

/** Re-encryption to the members and what is sent on each server connection. */
function MemberConnectionsSection({ form, certificates }: { form: UseFormReturn<PoolFormValues>; certificates: readonly CertificateChoice[] }) {
  const { register, control, formState } = form;
  const { errors } = formState;
  const [tls, verify] = useWatch({ control, name: ['tls', 'tls_verify'] });
  const options = certificates.map((c) => ({ value: String(c.id), label: c.is_ca ? `${c.name} (CA)` : c.name }));
  return (
    <FormSection title="Connections to members">
      <CheckboxField label="Re-encrypt (TLS to members)" error={errors.tls?.message} {...register('tls')} />
      {tls ? (
        <>
          <CheckboxField label="Verify members' certificates" error={errors.tls_verify?.message} {...register('tls_verify')} />
          <div className="form-row">
            {verify ? (
              <SelectField label="CA bundle" placeholder={options.length ? 'Choose a CA bundle…' : 'No certificates yet'} options={options} error={errors.tls_ca?.message} {...register('tls_ca')} />
            ) : null}
            <TextField label="SNI" placeholder="app.internal or @host" hint="Empty for none; @host sends the client's Host." error={errors.tls_sni?.message} {...register('tls_sni')} />
          </div>
        </>
      ) : null}
      <SelectField label="Proxy protocol" options={PROXY_PROTOCOLS} hint="Tells members the client's address; they must expect it." error={errors.proxy_protocol?.message} {...register('proxy_protocol')} />
      <div className="form-row">
        <SelectField label="Connection reuse" options={HTTP_REUSE} hint="HTTP: which requests may reuse an idle server connection." error={errors.http_reuse?.message} {...register('http_reuse')} />
        <TextField label="Idle connections per member" type="number" min={-1} hint="-1 = no limit, 0 = none." error={errors.pool_max_conn?.message} {...register('pool_max_conn', number)} />
        <TextField label="Purge delay (ms)" type="number" min={0} error={errors.pool_purge_delay_ms?.message} {...register('pool_purge_delay_ms', number)} />
      </div>
    </FormSection>
  );
}

export function PoolForm({ defaultValues, certificates, submitLabel, onSubmit, extraActions }: PoolFormProps) {
  const form = useServerForm<PoolFormValues>({
    schema: poolFormSchema,
    defaultValues,
    fields: poolFormFields,
    onSubmit,
    onSaved: (values, rhf) => rhf.reset(values),
  });
  const { register, formState, problem, submit } = form;
  const { errors } = formState;
  return (
    <form onSubmit={submit} noValidate className="form form-wide">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <FormSection title="Pool">
        <TextField label="Name" hint={NAME_HELP} error={errors.name?.message} {...register('name')} />
        <SelectField label="Algorithm" options={ALGORITHMS} error={errors.algorithm?.message} {...register('algorithm')} />
        <TextField label="Description" error={errors.description?.message} {...register('description')} />
      </FormSection>
      <PersistenceSection form={form} />
      <MemberConnectionsSection form={form} certificates={certificates} />
      <FormSection title="Timeouts" description="In milliseconds, 100 ms to 24 h.">
        <div className="form-row">
          <TextField label="Connect timeout (ms)" type="number" min={100} error={errors.connect_timeout_ms?.message} {...register('connect_timeout_ms', number)} />
          <TextField label="Server timeout (ms)" type="number" min={100} error={errors.server_timeout_ms?.message} {...register('server_timeout_ms', number)} />
          <TextField label="Queue timeout (ms)" type="number" min={100} error={errors.queue_timeout_ms?.message} {...register('queue_timeout_ms', number)} />
        </div>
      </FormSection>
      <FormSection title="Maintenance page">
        <TextAreaField
          label="Maintenance page (HTML)"
          mono
          rows={5}
          spellCheck={false}
          hint="Answered with 503 when no member can take a request (HTTP services); empty for HAProxy's page."
          error={errors.maintenance_page?.message}
          {...register('maintenance_page')}
        />
      </FormSection>
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          {submitLabel}
        </Button>
        {extraActions}
      </FormActions>
    </form>
  );
}
