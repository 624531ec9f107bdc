import { type UseFormReturn, useWatch } from 'react-hook-form';
import { Alert, Button, CheckboxField, FormActions, FormSection, LinesField, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { INTERFACE_HELP, NAME_HELP } from '@/lib/validation';
import {
  advertHelp,
  haGroupFormFields,
  type HaGroupFormValues,
  haGroupFormSchema,
  type HaNode,
  PASSWORD_HELP,
  translateHaGroupPath,
  VRID_MAX,
  VRID_MIN,
  VRRP_VERSIONS,
} from '../types';
import { HaGroupNodesEditor } from './HaGroupNodesEditor';

type HaGroupFormProps = {
  defaultValues: HaGroupFormValues;
  nodes: readonly HaNode[];
  submitLabel: string;
  onSubmit: (values: HaGroupFormValues) => Promise<unknown>;
  onCancel?: () => void;
  /** The stored group has a VRRPv2 password (write-only: it is never shown). */
  hasPassword?: boolean;
};

type SectionProps = { form: UseFormReturn<HaGroupFormValues> };

const number = { valueAsNumber: true } as const;

/** How the nodes talk: the protocol version, the advert rate, preemption and VRRPv2's password. */
function VrrpSection({ form, hasPassword }: SectionProps & { hasPassword: boolean }) {
  const { register, control, formState } = form;
  const { errors } = formState;
  const [version, preempt] = useWatch({ control, name: ['vrrp_version', 'preempt'] });
  return (
    <FormSection title="VRRP">
      <div className="form-row">
        <SelectField label="Version" options={VRRP_VERSIONS} error={errors.vrrp_version?.message} {...register('vrrp_version')} />
        <TextField
          label="Advert interval (ms)"
          type="number"
          min={version === '2' ? 1000 : 10}
          step={version === '2' ? 1000 : 10}
          hint={`${advertHelp(version)} A backup takes over after about 3 missed adverts.`}
          error={errors.advert_interval_ms?.message}
          {...register('advert_interval_ms', number)}
        />
      </div>
      <div className="form-row">
        <CheckboxField
          label="Preempt"
          hint="A node of higher priority that comes back takes the VIPs back."
          error={errors.preempt?.message}
          {...register('preempt')}
        />
        <TextField
          label="Preempt delay (s)"
          type="number"
          min={0}
          max={1000}
          className="field-narrow"
          hint={preempt ? 'Lets a returning node settle first.' : 'Only with preempt.'}
          error={errors.preempt_delay_s?.message}
          {...register('preempt_delay_s', number)}
        />
      </div>
      {version === '2' ? (
        <div className="form-row">
          <TextField
            label="Password"
            type="password"
            autoComplete="new-password"
            hint={`Sent in clear text, so it only keeps other VRRP speakers apart. ${PASSWORD_HELP}. ${hasPassword ? 'One is set: leave empty to keep it.' : 'Empty for none.'}`}
            error={errors.auth_password?.message}
            {...register('auth_password')}
          />
          {hasPassword ? <CheckboxField label="Remove the password" hint="Wins over a new one." {...register('clear_password')} /> : null}
        </div>
      ) : null}
    </FormSection>
  );
}

/** What else makes a node give up its master role. */
function TriggersSection({ form }: SectionProps) {
  const { register, formState } = form;
  const { errors } = formState;
  return (
    <FormSection title="Failover triggers" description="Besides a silent master, these make a node give up the VIPs at once.">
      <CheckboxField label="Track HAProxy" hint="Give up the VIPs when HAProxy is not running on the node." error={errors.track_haproxy?.message} {...register('track_haproxy')} />
      <div className="form-row">
        <LinesField label="Track interfaces" placeholder="eth1" hint="Give up the VIPs when one of these links is down." error={errors.track_interfaces?.message} {...register('track_interfaces')} />
        <TextField
          label="Witness"
          placeholder="10.0.0.1"
          hint="An address (the gateway, say) that must answer ping before a node claims the VIPs: an isolated node stays backup. Empty for none."
          error={errors.witness?.message}
          {...register('witness')}
        />
      </div>
    </FormSection>
  );
}

function GarpSection({ form }: SectionProps) {
  const { register, formState } = form;
  const { errors } = formState;
  return (
    <FormSection title="Gratuitous ARP" description="How the new master tells switches and neighbours where the VIPs are now (unsolicited NA for IPv6).">
      <div className="form-row">
        <TextField label="Refresh every (s)" type="number" min={0} max={86_400} hint="0: only on takeover." error={errors.garp_refresh_s?.message} {...register('garp_refresh_s', number)} />
        <TextField label="Repeat" type="number" min={1} max={100} className="field-narrow" hint="Messages each time." error={errors.garp_repeat?.message} {...register('garp_repeat', number)} />
      </div>
    </FormSection>
  );
}

/** An HA group: VIPs that move together between the nodes listed, each with its own priority. */
export function HaGroupForm({ defaultValues, nodes, submitLabel, onSubmit, onCancel, hasPassword = false }: HaGroupFormProps) {
  const form = useServerForm<HaGroupFormValues>({
    schema: haGroupFormSchema,
    defaultValues,
    fields: haGroupFormFields,
    translate: (path, values) => translateHaGroupPath(path, values, nodes),
    onSubmit,
  });
  const { register, formState, problem, submit } = form;
  const { errors } = formState;
  return (
    <form onSubmit={submit} noValidate className="form form-wide">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <FormSection title="Group">
        <div className="form-row">
          <TextField label="Name" hint={NAME_HELP} autoFocus error={errors.name?.message} {...register('name')} />
          <TextField
            label="VRID"
            type="number"
            min={VRID_MIN}
            max={VRID_MAX}
            className="field-narrow"
            hint="Unique on the segment."
            error={errors.vrid?.message}
            {...register('vrid', number)}
          />
          <TextField label="Interface" placeholder="eth0" hint={`Where the VIPs live and the adverts go. ${INTERFACE_HELP}`} error={errors.interface?.message} {...register('interface')} />
        </div>
        <LinesField
          label="VIPs"
          placeholder="10.0.0.10"
          hint="Addresses, with /prefix if not a host route; one address family per group."
          error={errors.vips?.message}
          {...register('vips')}
        />
      </FormSection>
      <HaGroupNodesEditor form={form} nodes={nodes} />
      <VrrpSection form={form} hasPassword={hasPassword} />
      <TriggersSection form={form} />
      <GarpSection form={form} />
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
