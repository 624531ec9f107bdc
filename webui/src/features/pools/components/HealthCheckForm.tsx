import type { ReactNode } from 'react';
import { useWatch } from 'react-hook-form';
import { Alert, Button, CheckboxField, FormActions, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import {
  bodyMatchChoices,
  CHECK_METHODS,
  checkTypeChoices,
  DNS_TYPES,
  healthCheckFormFields,
  type HealthCheckFormValues,
  healthCheckFormSchema,
  isHttpCheck,
  type PoolLayer,
} from '../types';

type HealthCheckFormProps = {
  defaultValues: HealthCheckFormValues;
  submitLabel: string;
  onSubmit: (values: HealthCheckFormValues) => Promise<unknown>;
  extraActions?: ReactNode;
  /** The pool's layer: HAProxy runs its checks, keepalived those of layer-4 pools. */
  layer?: PoolLayer;
};

const METHOD_OPTIONS = CHECK_METHODS.map((method) => ({ value: method, label: method }));
const DNS_TYPE_OPTIONS = DNS_TYPES.map((type) => ({ value: type, label: type }));
const number = { valueAsNumber: true } as const;

// keepalived brings a member back after its first good check: rise is HAProxy's.
const RISE_HINT: Record<PoolLayer, string> = {
  proxy: 'Passes to mark up.',
  ipvs: 'Not used on layer 4: one good check brings a member back.',
  unknown: 'Passes to mark up (HAProxy; layer 4 needs one).',
};

export function HealthCheckForm({ defaultValues, submitLabel, onSubmit, extraActions, layer = 'unknown' }: HealthCheckFormProps) {
  const { register, control, formState, problem, submit } = useServerForm<HealthCheckFormValues>({
    schema: healthCheckFormSchema,
    defaultValues,
    fields: (values) => healthCheckFormFields(values.type, layer),
    onSubmit,
    onSaved: (values, form) => form.reset(values),
  });
  const { errors } = formState;
  const [type, match] = useWatch({ control, name: ['type', 'expect_body_match'] });
  const note = layer === 'unknown' ? ' (layer 4)' : '';
  return (
    <form onSubmit={submit} noValidate className="form form-wide">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <SelectField label="Check type" options={checkTypeChoices(layer)} error={errors.type?.message} {...register('type')} />
      {isHttpCheck(type) ? (
        <>
          <div className="form-row">
            <SelectField
              label="Method"
              className="field-narrow"
              options={METHOD_OPTIONS}
              hint={layer === 'proxy' ? undefined : 'Layer 4 sends GET.'}
              error={errors.method?.message}
              {...register('method')}
            />
            <TextField label="Path" placeholder="/health" error={errors.path?.message} {...register('path')} />
            <TextField label="Expected status" type="number" min={100} max={599} className="field-narrow" error={errors.expected_status?.message} {...register('expected_status', number)} />
          </div>
          <TextField label="Host header" hint="Empty sends an HTTP/1.0 request without one." error={errors.host?.message} {...register('host')} />
          <div className="form-row">
            <SelectField label="Body" className="field-narrow" options={bodyMatchChoices(layer)} error={errors.expect_body_match?.message} {...register('expect_body_match')} />
            <TextField
              label="Expected body"
              className={match === 'digest' ? 'mono' : undefined}
              hint={match === 'digest' ? 'The MD5 of the page: 32 hex digits (md5sum, or keepalived’s genhash).' : 'Empty checks the status only.'}
              error={errors.expect_body?.message}
              {...register('expect_body')}
            />
          </div>
        </>
      ) : null}
      {type === 'agent' ? (
        <TextField label="Agent port" type="number" min={1} max={65535} className="field-narrow" hint="The TCP port of the load agent on each member." error={errors.agent_port?.message} {...register('agent_port', number)} />
      ) : null}
      {type === 'dns' ? (
        <div className="form-row">
          <SelectField label="Record type" className="field-narrow" options={DNS_TYPE_OPTIONS} error={errors.dns_type?.message} {...register('dns_type')} />
          <TextField label="Name queried" placeholder="www.example.com" hint="The default '.' asks about the root zone." error={errors.dns_name?.message} {...register('dns_name')} />
        </div>
      ) : null}
      {type === 'script' ? (
        <>
          <TextField
            label="Command"
            className="mono"
            placeholder="/etc/fulcrum/checks/smtp --port=25"
            hint="A program installed on the nodes under /etc/fulcrum/checks/ and plain arguments; exit status 0 = up."
            error={errors.script?.message}
            {...register('script')}
          />
          <CheckboxField
            label="Dynamic weight"
            hint="An exit status of 2 to 255 sets the member's weight to the status minus 2."
            error={errors.script_dynamic?.message}
            {...register('script_dynamic')}
          />
        </>
      ) : null}
      <div className="form-row">
        <TextField label="Interval (ms)" type="number" min={100} className="field-narrow" error={errors.interval_ms?.message} {...register('interval_ms', number)} />
        <TextField label="Timeout (ms)" type="number" min={100} className="field-narrow" error={errors.timeout_ms?.message} {...register('timeout_ms', number)} />
        <TextField label="Rise" type="number" min={1} max={100} className="field-narrow" hint={RISE_HINT[layer]} error={errors.rise?.message} {...register('rise', number)} />
        <TextField label="Fall" type="number" min={1} max={100} className="field-narrow" hint="Failures to mark down." error={errors.fall?.message} {...register('fall', number)} />
        <TextField
          label="Retry delay (ms)"
          type="number"
          min={0}
          className="field-narrow"
          hint="Between checks after a failure; 0 = the interval."
          error={errors.retry_interval_ms?.message}
          {...register('retry_interval_ms', number)}
        />
      </div>
      {layer === 'proxy' ? null : (
        <div className="form-row">
          <CheckboxField label={`Start members down${note}`} hint="Until their first check passes (alpha)." error={errors.alpha?.message} {...register('alpha')} />
          <CheckboxField label={`Notify when keepalived stops${note}`} hint="Runs the down notifications (omega)." error={errors.omega?.message} {...register('omega')} />
        </div>
      )}
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          {submitLabel}
        </Button>
        {extraActions}
      </FormActions>
    </form>
  );
}
