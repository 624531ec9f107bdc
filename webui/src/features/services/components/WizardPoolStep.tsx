import { type UseFormReturn, useFieldArray, useWatch } from 'react-hook-form';
import { Button, FormSection, SelectField, TextField } from '@/components';
import { NAME_HELP } from '@/lib/validation';
import { emptyMember, type PoolChoice, WIZARD_ALGORITHMS, WIZARD_CHECKS, type WizardValues } from '../types';
import { ChoiceGroup } from './WizardChoiceGroup';

type StepProps = { form: UseFormReturn<WizardValues> };

const number = { valueAsNumber: true } as const;

/** The new pool's members as rows: name, address, port; rows are added and removed freely. */
function MembersEditor({ form }: StepProps) {
  const { register, control, formState, getValues } = form;
  const { fields, append, remove } = useFieldArray({ control, name: 'members' });
  const errors = formState.errors.members;
  const listError = errors?.message ?? errors?.root?.message;
  return (
    <FormSection title="Members" description="The servers that take the traffic.">
      {listError ? <p className="field-error" role="alert">{listError}</p> : null}
      {fields.map((field, index) => (
        <div key={field.id} className="form-row" role="group" aria-label={`Member ${index + 1}`}>
          <TextField label="Member name" autoComplete="off" error={errors?.[index]?.name?.message} {...register(`members.${index}.name`)} />
          <TextField label="Address" placeholder="10.0.0.21" error={errors?.[index]?.address?.message} {...register(`members.${index}.address`)} />
          <TextField label="Port" type="number" min={1} max={65535} className="field-narrow" error={errors?.[index]?.port?.message} {...register(`members.${index}.port`, number)} />
          <div className="field field-action">
            <Button variant="ghost" size="small" onClick={() => remove(index)} aria-label={`Remove member ${index + 1}`}>
              Remove
            </Button>
          </div>
        </div>
      ))}
      <div>
        <Button size="small" onClick={() => append(emptyMember(getValues(), getValues('members').length))}>
          Add member
        </Button>
      </div>
    </FormSection>
  );
}

function HealthCheckFields({ form }: StepProps) {
  const { register, control, formState } = form;
  const { errors } = formState;
  const type = useWatch({ control, name: 'check_type' });
  return (
    <FormSection title="Health check" description="Members that fail it get no traffic until they pass again (every 2 s).">
      <SelectField label="Health check" options={WIZARD_CHECKS} error={errors.check_type?.message} {...register('check_type')} />
      {type === 'http' ? (
        <div className="form-row">
          <TextField label="Path" placeholder="/health" hint="Requested with GET." error={errors.check_path?.message} {...register('check_path')} />
          <TextField
            label="Expected status"
            type="number"
            min={100}
            max={599}
            className="field-narrow"
            error={errors.check_status?.message}
            {...register('check_status', number)}
          />
        </div>
      ) : null}
    </FormSection>
  );
}

function NewPoolFields({ form }: StepProps) {
  const { register, control, formState } = form;
  const { errors } = formState;
  const algorithm = useWatch({ control, name: 'algorithm' });
  return (
    <>
      <div className="form-row">
        <TextField label="Pool name" hint={NAME_HELP} autoComplete="off" error={errors.pool_name?.message} {...register('pool_name')} />
        <SelectField
          label="Algorithm"
          options={WIZARD_ALGORITHMS.map(({ value, label }) => ({ value, label }))}
          hint={WIZARD_ALGORITHMS.find((choice) => choice.value === algorithm)?.explain}
          error={errors.algorithm?.message}
          {...register('algorithm')}
        />
      </div>
      <MembersEditor form={form} />
      <HealthCheckFields form={form} />
      <p className="muted">Persistence, limits and the other settings are on the pool's page once it exists.</p>
    </>
  );
}

/** Step 3: an existing pool, or a new one with its members, algorithm and health check. */
export function PoolStep({ form, pools }: StepProps & { pools: readonly PoolChoice[] }) {
  const { register, control, formState, setValue } = form;
  const mode = useWatch({ control, name: 'pool_mode' });
  const choices = [
    { value: 'new' as const, label: 'Create a new pool', explain: 'With its members and health check, made with the service.' },
    ...(pools.length ? [{ value: 'existing' as const, label: 'Use an existing pool', explain: 'Its members, algorithm and checks stay as they are.' }] : []),
  ];
  return (
    <div className="form-section-body">
      <ChoiceGroup legend="Pool" choices={choices} value={mode} onChange={(value) => setValue('pool_mode', value)} />
      {mode === 'existing' ? (
        <SelectField
          label="Existing pool"
          placeholder="Choose a pool…"
          options={pools.map((pool) => ({ value: String(pool.id), label: pool.name }))}
          error={formState.errors.existing_pool?.message}
          {...register('existing_pool')}
        />
      ) : (
        <NewPoolFields form={form} />
      )}
    </div>
  );
}
