import { type UseFormReturn, useWatch } from 'react-hook-form';
import { CheckboxField, FormSection, SelectField, TextField } from '@/components';
import { persistenceChoices, persistenceFields, type PoolFormValues, type PoolLayer } from '../types';

const number = { valueAsNumber: true } as const;

const DESCRIPTION: Record<PoolLayer, string> = {
  proxy: 'Keeps a client on the server it first reached.',
  ipvs: 'Keeps a client on the server it first reached; IPVS persists by source address.',
  unknown: 'Keeps a client on the server it first reached; layer-4 (IPVS) pools persist by source address only.',
};

/** How a client keeps its server; only the settings the chosen type uses on this layer are shown. */
export function PersistenceSection({ form, layer = 'unknown' }: { form: UseFormReturn<PoolFormValues>; layer?: PoolLayer }) {
  const { register, control, formState } = form;
  const errors = formState.errors.persistence;
  const type = useWatch({ control, name: 'persistence.type' });
  const uses = new Set<string>(persistenceFields(type, layer));
  const cookieInsert = type === 'cookie_insert';
  return (
    <FormSection title="Persistence" description={DESCRIPTION[layer]}>
      <SelectField label="Persistence" options={persistenceChoices(layer)} error={errors?.type?.message ?? errors?.message} {...register('persistence.type')} />
      {uses.has('cookie_name') ? (
        <TextField
          label="Cookie name"
          hint={cookieInsert ? 'Set by the balancer.' : "The application's own cookie."}
          error={errors?.cookie_name?.message}
          {...register('persistence.cookie_name')}
        />
      ) : null}
      {uses.has('header_name') ? (
        <TextField label="Header name" placeholder="X-Session" error={errors?.header_name?.message} {...register('persistence.header_name')} />
      ) : null}
      {cookieInsert ? (
        <>
          <div className="form-row">
            <CheckboxField label="Indirect (hidden from the server)" error={errors?.indirect?.message} {...register('persistence.indirect')} />
            <CheckboxField label="No cache" hint="Marks responses with the cookie uncacheable." error={errors?.nocache?.message} {...register('persistence.nocache')} />
          </div>
          <div className="form-row">
            <CheckboxField label="HttpOnly" error={errors?.httponly?.message} {...register('persistence.httponly')} />
            <CheckboxField label="Secure" error={errors?.secure?.message} {...register('persistence.secure')} />
          </div>
          <div className="form-row">
            <TextField label="Max idle (s)" type="number" min={0} hint="0 = no limit." error={errors?.max_idle_s?.message} {...register('persistence.max_idle_s', number)} />
            <TextField label="Max life (s)" type="number" min={0} hint="0 = no limit." error={errors?.max_life_s?.message} {...register('persistence.max_life_s', number)} />
          </div>
        </>
      ) : null}
      {uses.has('ipv4_mask') ? (
        <div className="form-row">
          <TextField label="IPv4 mask" type="number" min={1} max={32} hint="Clients in one /N share a server." error={errors?.ipv4_mask?.message} {...register('persistence.ipv4_mask', number)} />
          <TextField label="IPv6 mask" type="number" min={1} max={128} error={errors?.ipv6_mask?.message} {...register('persistence.ipv6_mask', number)} />
        </div>
      ) : null}
      {uses.has('timeout_s') ? (
        <div className="form-row">
          <TextField label="Forget after (s)" type="number" min={1} hint="Idle entries expire." error={errors?.timeout_s?.message} {...register('persistence.timeout_s', number)} />
          {uses.has('table_size') ? (
            <TextField label="Table size" type="number" min={1} hint="Entries kept." error={errors?.table_size?.message} {...register('persistence.table_size', number)} />
          ) : null}
        </div>
      ) : null}
      {uses.has('fallback_source') ? (
        <CheckboxField label="Fall back to the source address" hint="For clients without a session ID (TLS 1.3)." error={errors?.fallback_source?.message} {...register('persistence.fallback_source')} />
      ) : null}
    </FormSection>
  );
}
