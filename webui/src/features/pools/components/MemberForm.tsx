import { Alert, Button, CheckboxField, FormActions, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { MEMBER_FORWARDING, MEMBER_STATES, memberFormFields, type MemberFormValues, memberFormSchema, type PoolLayer } from '../types';

type MemberFormProps = {
  defaultValues: MemberFormValues;
  submitLabel: string;
  onSubmit: (values: MemberFormValues) => Promise<unknown>;
  onCancel?: () => void;
  /** The pool's layer: IPVS members have thresholds and a forwarding method, HAProxy's a queue and slow start. */
  layer?: PoolLayer;
};

const number = { valueAsNumber: true } as const;

const LIMIT_HINT: Record<PoolLayer, string> = {
  proxy: '0 = no limit; beyond it requests queue.',
  ipvs: '0 = no limit; at it the member takes no new connections.',
  unknown: '0 = no limit.',
};
const BACKUP_HINT: Record<PoolLayer, string> = {
  proxy: 'Serves only when no other member is up.',
  ipvs: 'The sorry server: serves only when no other member is up (one per pool).',
  unknown: 'Serves only when no other member is up (layer 4: one, the sorry server).',
};

export function MemberForm({ defaultValues, submitLabel, onSubmit, onCancel, layer = 'unknown' }: MemberFormProps) {
  const { register, formState, problem, submit } = useServerForm<MemberFormValues>({
    schema: memberFormSchema,
    defaultValues,
    fields: memberFormFields(layer),
    onSubmit,
    onSaved: (_values, form) => {
      form.reset(defaultValues);
      form.setFocus('name');
    },
  });
  const { errors } = formState;
  const note = layer === 'unknown' ? ' (layer 4)' : '';
  const proxyNote = layer === 'unknown' ? ' HAProxy only.' : '';
  return (
    <form onSubmit={submit} noValidate className="form form-inline">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <div className="form-row">
        <TextField label="Member name" error={errors.name?.message} {...register('name')} />
        <TextField label="Address" placeholder="10.0.0.21" error={errors.address?.message} {...register('address')} />
        <TextField label="Port" type="number" min={1} max={65535} className="field-narrow" error={errors.port?.message} {...register('port', number)} />
        <TextField label="Weight" type="number" min={0} max={256} className="field-narrow" error={errors.weight?.message} {...register('weight', number)} />
        <SelectField
          label="State"
          options={MEMBER_STATES.map(({ value, label }) => ({ value, label }))}
          error={errors.state?.message}
          {...register('state')}
        />
      </div>
      <div className="form-row">
        <TextField label="Max connections" type="number" min={0} hint={LIMIT_HINT[layer]} error={errors.max_connections?.message} {...register('max_connections', number)} />
        {layer === 'proxy' ? null : (
          <TextField
            label={`Min connections${note}`}
            type="number"
            min={0}
            hint="After reaching the max, takes new ones again below this; 0 = at once."
            error={errors.min_connections?.message}
            {...register('min_connections', number)}
          />
        )}
        {layer === 'ipvs' ? null : (
          <>
            <TextField label="Max queue" type="number" min={0} hint={`0 = no limit.${proxyNote}`} error={errors.max_queue?.message} {...register('max_queue', number)} />
            <TextField label="Slow start (ms)" type="number" min={0} hint={`Weight ramps up after recovery; 0 = off.${proxyNote}`} error={errors.slowstart_ms?.message} {...register('slowstart_ms', number)} />
          </>
        )}
        <CheckboxField label="Backup" hint={BACKUP_HINT[layer]} error={errors.backup?.message} {...register('backup')} />
        <CheckboxField label="On the node" hint="A service on each node itself, at a loopback address." error={errors.loopback?.message} {...register('loopback')} />
      </div>
      {layer === 'proxy' ? null : (
        <div className="form-row">
          <SelectField
            label={`Forwarding${note}`}
            options={MEMBER_FORWARDING}
            hint="Another IPVS method for this member only, e.g. tunnel to a server on another network."
            error={errors.forwarding?.message}
            {...register('forwarding')}
          />
        </div>
      )}
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
