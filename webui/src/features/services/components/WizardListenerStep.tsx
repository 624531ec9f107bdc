import { type UseFormReturn, useWatch } from 'react-hook-form';
import { SelectField, TextField } from '@/components';
import { NAME_HELP } from '@/lib/validation';
import { FORWARDING_METHODS, LAYER4_METHODS, type WizardValues } from '../types';

const LAYER4_CHOICES = FORWARDING_METHODS.filter((method) => LAYER4_METHODS.includes(method.value));
const LAYER4_PROTOCOLS = [
  { value: 'tcp', label: 'TCP' },
  { value: 'udp', label: 'UDP' },
];
const WEB_PROTOCOL = { http: 'HTTP (layer 7)', https: 'HTTPS: TLS ends on the balancer (layer 7)' } as const;

/** Step 2: where clients connect — name, VIP, port and, on layer 4, the method and protocol. */
export function ListenerStep({ form }: { form: UseFormReturn<WizardValues> }) {
  const { register, control, formState } = form;
  const { errors } = formState;
  const [kind, forwarding, protocol] = useWatch({ control, name: ['kind', 'forwarding', 'protocol'] });
  const layer4 = kind === 'layer4';
  return (
    <div className="form-section-body">
      <TextField label="Name" hint={NAME_HELP} autoComplete="off" error={errors.name?.message} {...register('name')} />
      <div className="form-row">
        <TextField label="VIP" hint="The address clients connect to, IPv4 or IPv6." placeholder="10.0.0.10" error={errors.vip?.message} {...register('vip')} />
        <TextField
          label="Port"
          type="number"
          min={1}
          max={65535}
          className="field-narrow"
          hint={layer4 ? 'The port clients connect to.' : undefined}
          error={errors.port?.message}
          {...register('port', { valueAsNumber: true })}
        />
      </div>
      {layer4 ? (
        <div className="form-row">
          <SelectField
            label="Forwarding"
            options={LAYER4_CHOICES.map(({ value, label }) => ({ value, label }))}
            hint={LAYER4_CHOICES.find((method) => method.value === forwarding)?.explain}
            error={errors.forwarding?.message}
            {...register('forwarding')}
          />
          <SelectField label="Protocol" className="field-narrow" options={LAYER4_PROTOCOLS} error={errors.protocol?.message} {...register('protocol')} />
        </div>
      ) : (
        <p className="muted">
          Protocol: {protocol === 'https' ? WEB_PROTOCOL.https : WEB_PROTOCOL.http}. To change it, go back and choose another kind.
        </p>
      )}
    </div>
  );
}
