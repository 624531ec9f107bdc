import type { ReactNode } from 'react';
import { type UseFormReturn, useWatch } from 'react-hook-form';
import { Alert, Button, CheckboxField, FormActions, FormSection, SelectField, TextAreaField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { NAME_HELP } from '@/lib/validation';
import {
  algorithmChoices,
  type CertificateChoice,
  HTTP_REUSE,
  ON_FAILURE,
  poolFormFields,
  type PoolFormValues,
  poolFormSchema,
  type PoolLayer,
  PROXY_PROTOCOLS,
  usesFeedback,
  usesHashOptions,
} from '../types';
import { PersistenceSection } from './PersistenceSection';

type PoolFormProps = {
  defaultValues: PoolFormValues;
  certificates: readonly CertificateChoice[];
  submitLabel: string;
  onSubmit: (values: PoolFormValues) => Promise<unknown>;
  extraActions?: ReactNode;
  /** From the services using the pool; `unknown` offers every setting, marked by layer. */
  layer?: PoolLayer;
};

type SectionProps = { form: UseFormReturn<PoolFormValues>; layer: PoolLayer };

const number = { valueAsNumber: true } as const;
const HAPROXY_ONLY = 'Proxy (HAProxy) pools only.';

/** Re-encryption to the members and what is sent on each server connection. */
function MemberConnectionsSection({ form, layer, certificates }: SectionProps & { certificates: readonly CertificateChoice[] }) {
  const { register, control, formState } = form;
  const { errors } = formState;
  const [tls, verify] = useWatch({ control, name: ['tls', 'tls_verify'] });
  const options = certificates.map((c) => ({ value: String(c.id), label: c.is_ca ? `${c.name} (CA)` : c.name }));
  return (
    <FormSection title="Connections to members" description={layer === 'unknown' ? HAPROXY_ONLY : undefined}>
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

/** What IPVS does with the pool: hashing options of the hash schedulers, and failed members. */
function Layer4Section({ form, layer }: SectionProps) {
  const { register, control, formState } = form;
  const { errors } = formState;
  const algorithm = useWatch({ control, name: 'algorithm' });
  const note = layer === 'unknown' ? ' (layer 4)' : '';
  return (
    <FormSection title="Layer 4 (IPVS)" description={layer === 'unknown' ? 'Used when the services forward by NAT, direct routing or tunnel.' : undefined}>
      <SelectField
        label={`When a health check fails${note}`}
        options={ON_FAILURE}
        hint="Quiescing lets established connections finish on the member."
        error={errors.on_failure?.message}
        {...register('on_failure')}
      />
      {usesHashOptions(algorithm) ? (
        <div className="form-row">
          <CheckboxField label={`Hash the source port too${note}`} hint="Spreads one client's connections over the members." error={errors.hash_port?.message} {...register('hash_port')} />
          <CheckboxField
            label={`Fall back to another member${note}`}
            hint="When the hashed member is down or at its limit."
            error={errors.hash_fallback?.message}
            {...register('hash_fallback')}
          />
        </div>
      ) : null}
    </FormSection>
  );
}

/** Where dynamic least load reads the members' loads: fulcrum-loadd on every member. */
function FeedbackSection({ form, layer }: SectionProps) {
  const { register, control, formState } = form;
  const { errors } = formState;
  const algorithm = useWatch({ control, name: 'algorithm' });
  if (!usesFeedback(algorithm)) return null;
  return (
    <FormSection
      title="Load feedback (DLLC)"
      description="Every member runs fulcrum-loadd. New connections go to the member with the fewest connections × load ÷ weight."
    >
      <div className="form-row">
        <TextField
          label="Load port (JSON)"
          type="number"
          min={1}
          hint="fulcrum-loadd's HTTP port; the node agent reads loads there (IPVS: into the ip_vs_dllc module)."
          error={errors.feedback_http_port?.message}
          {...register('feedback_http_port', number)}
        />
        {layer === 'ipvs' ? null : (
          <>
            <TextField
              label={`Agent port${layer === 'unknown' ? ' (HAProxy pools)' : ''}`}
              type="number"
              min={1}
              hint="fulcrum-loadd's agent-check port; HAProxy asks it for each member's weight."
              error={errors.feedback_agent_port?.message}
              {...register('feedback_agent_port', number)}
            />
            <TextField
              label="Agent interval (ms)"
              type="number"
              min={100}
              error={errors.feedback_interval_ms?.message}
              {...register('feedback_interval_ms', number)}
            />
          </>
        )}
      </div>
    </FormSection>
  );
}

export function PoolForm({ defaultValues, certificates, submitLabel, onSubmit, extraActions, layer = 'unknown' }: PoolFormProps) {
  const form = useServerForm<PoolFormValues>({
    schema: poolFormSchema,
    defaultValues,
    fields: (values) => poolFormFields(values, layer),
    onSubmit,
    onSaved: (values, rhf) => rhf.reset(values),
  });
  const { register, formState, problem, submit } = form;
  const { errors } = formState;
  const proxy = layer !== 'ipvs';
  return (
    <form onSubmit={submit} noValidate className="form form-wide">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <FormSection title="Pool">
        <TextField label="Name" hint={NAME_HELP} error={errors.name?.message} {...register('name')} />
        <SelectField
          label="Algorithm"
          options={algorithmChoices(layer)}
          hint={layer === 'unknown' ? 'The layer-4 ones need services that forward by NAT, direct routing or tunnel.' : undefined}
          error={errors.algorithm?.message}
          {...register('algorithm')}
        />
        <TextField label="Description" error={errors.description?.message} {...register('description')} />
      </FormSection>
      <FeedbackSection form={form} layer={layer} />
      <PersistenceSection form={form} layer={layer} />
      {layer === 'proxy' ? null : <Layer4Section form={form} layer={layer} />}
      {proxy ? (
        <>
          <MemberConnectionsSection form={form} layer={layer} certificates={certificates} />
          <FormSection title="Timeouts" description={`In milliseconds, 100 ms to 24 h.${layer === 'unknown' ? ` ${HAPROXY_ONLY}` : ''}`}>
            <div className="form-row">
              <TextField label="Connect timeout (ms)" type="number" min={100} error={errors.connect_timeout_ms?.message} {...register('connect_timeout_ms', number)} />
              <TextField label="Server timeout (ms)" type="number" min={100} error={errors.server_timeout_ms?.message} {...register('server_timeout_ms', number)} />
              <TextField label="Queue timeout (ms)" type="number" min={100} error={errors.queue_timeout_ms?.message} {...register('queue_timeout_ms', number)} />
            </div>
          </FormSection>
          <FormSection title="Maintenance page" description={layer === 'unknown' ? HAPROXY_ONLY : undefined}>
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
        </>
      ) : null}
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          {submitLabel}
        </Button>
        {extraActions}
      </FormActions>
    </form>
  );
}
