import { useWatch } from 'react-hook-form';
import { Alert, Button, ButtonLink, CheckboxField, FormActions, FormSection, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { NAME_HELP } from '@/lib/validation';
import {
  type CertificateChoice,
  FORWARDING_METHODS,
  isHttpProtocol,
  isIpvs,
  type PoolChoice,
  protocolChoices,
  protocolFor,
  type ServiceFormValues,
  serviceFormFields,
  serviceFormSchema,
  translateServicePath,
} from '../types';
import { ErrorPagesEditor } from './ErrorPagesEditor';
import { ServiceProtectionSection } from './ServiceProtectionSection';
import { ServiceTlsSection } from './ServiceTlsSection';

type ServiceFormProps = {
  defaultValues: ServiceFormValues;
  pools: readonly PoolChoice[];
  certificates: readonly CertificateChoice[];
  submitLabel: string;
  onSubmit: (values: ServiceFormValues) => Promise<unknown>;
  /** Where Cancel goes: the service's page when editing. */
  cancelTo?: string;
};

// The usual port follows the protocol while it is still the other one's default.
const USUAL_PORT: Partial<Record<ServiceFormValues['protocol'], number>> = { http: 80, https: 443 };

export function ServiceForm({ defaultValues, pools, certificates, submitLabel, onSubmit, cancelTo = '/services' }: ServiceFormProps) {
  const form = useServerForm<ServiceFormValues>({
    schema: serviceFormSchema,
    defaultValues,
    fields: serviceFormFields,
    translate: (path, values) => translateServicePath(path, values, pools),
    onSubmit,
    onSaved: (values, rhf) => rhf.reset(values),
  });
  const { register, control, formState, problem, submit } = form;
  const { errors } = formState;
  const [forwarding, protocol] = useWatch({ control, name: ['forwarding', 'protocol'] });
  const ipvs = isIpvs(forwarding);
  const http = !ipvs && isHttpProtocol(protocol);
  const number = { valueAsNumber: true } as const;
  const onProtocolChange = (next: ServiceFormValues['protocol']) => {
    const port = form.getValues('port');
    if (USUAL_PORT[next] && Object.values(USUAL_PORT).includes(port)) form.setValue('port', USUAL_PORT[next]!);
  };
  // IPVS carries TCP and UDP, HAProxy HTTP, HTTPS and TCP: keep the protocol one the method offers.
  const onForwardingChange = (next: ServiceFormValues['forwarding']) => {
    form.setValue('protocol', protocolFor(next, form.getValues('protocol')));
  };
  const method = FORWARDING_METHODS.find((m) => m.value === forwarding);
  const poolHint = ipvs ? 'Its members get the connections; the pool holds the scheduler, persistence and health check.' : 'Serves requests no rule sends elsewhere.';

  return (
    <form onSubmit={submit} noValidate className="form form-wide">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <FormSection title="Listener">
        <TextField label="Name" hint={NAME_HELP} error={errors.name?.message} {...register('name')} />
        <div className="form-row">
          <SelectField
            label="Forwarding"
            options={FORWARDING_METHODS.map(({ value, label }) => ({ value, label }))}
            hint={method?.explain}
            error={errors.forwarding?.message}
            {...register('forwarding', { onChange: (event) => onForwardingChange(event.target.value) })}
          />
          <SelectField
            label="Protocol"
            className="field-narrow"
            options={protocolChoices(forwarding)}
            error={errors.protocol?.message}
            {...register('protocol', { onChange: (event) => onProtocolChange(event.target.value) })}
          />
        </div>
        <div className="form-row">
          <TextField label="VIP" hint="The address clients connect to, IPv4 or IPv6." placeholder="10.0.0.10" error={errors.vip?.message} {...register('vip')} />
          <TextField label="Port" type="number" min={1} max={65535} className="field-narrow" error={errors.port?.message} {...register('port', number)} />
          {ipvs ? (
            <TextField
              label="Last port"
              type="number"
              min={0}
              max={65535}
              className="field-narrow"
              hint="0 = the one port; else the range Port to Last port."
              error={errors.port_end?.message}
              {...register('port_end', number)}
            />
          ) : null}
        </div>
        {ipvs && protocol === 'udp' ? (
          <CheckboxField
            label="One-packet scheduling"
            hint="Schedule every datagram on its own (DNS, syslog) instead of per flow."
            error={errors.one_packet_scheduling?.message}
            {...register('one_packet_scheduling')}
          />
        ) : null}
        <div className="form-row">
          <SelectField
            label="Pool"
            placeholder={pools.length ? 'Choose a pool…' : 'No pools yet'}
            options={pools.map((pool) => ({ value: String(pool.id), label: pool.name }))}
            hint={pools.length ? poolHint : <>Create a pool first: <ButtonLink to="/pools/new" variant="ghost" size="small">New pool</ButtonLink></>}
            error={errors.default_pool?.message}
            {...register('default_pool')}
          />
        </div>
        <CheckboxField label="Enabled" hint="A disabled virtual service stays configured but does not listen." error={errors.enabled?.message} {...register('enabled')} />
        {!ipvs && protocol === 'http' ? (
          <CheckboxField label="Redirect every request to HTTPS" error={errors.redirect_https?.message} {...register('redirect_https')} />
        ) : null}
        <TextField label="Description" error={errors.description?.message} {...register('description')} />
        {ipvs ? (
          <p className="muted">
            Layer 4: the kernel forwards packets, so HAProxy's settings (rules, TLS, protection, timeouts, error pages) do not apply. Persistence,
            the scheduler and health checks are the pool's.
          </p>
        ) : null}
      </FormSection>
      {!ipvs && protocol === 'https' ? <ServiceTlsSection form={form} certificates={certificates} /> : null}
      {ipvs ? null : (
        <>
          <ServiceProtectionSection form={form} http={http} />
          <FormSection title="Timeouts" description="In milliseconds, 100 ms to 24 h.">
            <div className="form-row">
              <TextField label="Client idle timeout (ms)" type="number" min={100} error={errors.client_timeout_ms?.message} {...register('client_timeout_ms', number)} />
              {http ? (
                <>
                  <TextField label="Request head timeout (ms)" type="number" min={100} hint="Slow clients." error={errors.http_request_timeout_ms?.message} {...register('http_request_timeout_ms', number)} />
                  <TextField label="Keep-alive timeout (ms)" type="number" min={100} error={errors.keep_alive_timeout_ms?.message} {...register('keep_alive_timeout_ms', number)} />
                </>
              ) : null}
            </div>
          </FormSection>
        </>
      )}
      {http ? <ErrorPagesEditor form={form} /> : null}
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          {submitLabel}
        </Button>
        <ButtonLink to={cancelTo} variant="ghost">
          Cancel
        </ButtonLink>
      </FormActions>
    </form>
  );
}
