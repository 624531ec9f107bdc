import { Alert, Button, CheckboxField, FormActions, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { type HaGroupChoice, IPVS_SYNC_FORM_FIELDS, type IpvsSyncFormValues, ipvsSyncFormSchema } from '../types';

type IpvsSyncFormProps = {
  defaultValues: IpvsSyncFormValues;
  haGroups: readonly HaGroupChoice[];
  onSubmit: (values: IpvsSyncFormValues) => Promise<unknown>;
};

const number = { valueAsNumber: true } as const;

/** The kernel's connection sync daemon settings, the same on every node. */
export function IpvsSyncForm({ defaultValues, haGroups, onSubmit }: IpvsSyncFormProps) {
  const { register, formState, problem, submit } = useServerForm<IpvsSyncFormValues>({
    schema: ipvsSyncFormSchema,
    defaultValues,
    fields: IPVS_SYNC_FORM_FIELDS,
    onSubmit,
    onSaved: (values, form) => form.reset(values),
  });
  const { errors } = formState;
  return (
    <form onSubmit={submit} noValidate className="form form-wide" aria-label="IPVS connection sync">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <CheckboxField
        label="Synchronise connections"
        hint="Established layer-4 connections survive a failover to the other balancer."
        error={errors.enabled?.message}
        {...register('enabled')}
      />
      <div className="form-row">
        <TextField label="Interface" placeholder="eth1" hint="Where the balancers reach each other." error={errors.interface?.message} {...register('interface')} />
        <TextField label="Sync ID" type="number" min={0} max={255} className="field-narrow" hint="Tells pairs on one network apart." error={errors.sync_id?.message} {...register('sync_id', number)} />
        <TextField label="UDP port" type="number" min={1} max={65535} className="field-narrow" error={errors.port?.message} {...register('port', number)} />
        <TextField label="TTL" type="number" min={1} max={255} className="field-narrow" hint="Hops the messages may cross." error={errors.ttl?.message} {...register('ttl', number)} />
      </div>
      <SelectField
        label="HA group"
        placeholder="None: every node sends and receives"
        options={haGroups.map((group) => ({ value: String(group.id), label: group.name }))}
        hint="The group's master sends its connection table, its backups receive it: the node that takes the VIPs over has the connections."
        error={errors.ha_group?.message}
        {...register('ha_group')}
      />
      <div className="form-row">
        <TextField label="Multicast group" placeholder="224.0.0.81" hint="Empty for 224.0.0.81." error={errors.group?.message} {...register('group')} />
        <TextField
          label="Largest message (bytes)"
          type="number"
          min={0}
          max={65507}
          hint="0 = from the interface MTU."
          error={errors.max_packet?.message}
          {...register('max_packet', number)}
        />
      </div>
      <FormActions>
        <Button type="submit" variant="primary" busy={formState.isSubmitting}>
          Save sync settings
        </Button>
      </FormActions>
    </form>
  );
}
