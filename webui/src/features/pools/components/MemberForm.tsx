import { Alert, Button, CheckboxField, FormActions, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { MEMBER_FORM_FIELDS, MEMBER_STATES, type MemberFormValues, memberFormSchema } from '../types';

type MemberFormProps = {
  defaultValues: MemberFormValues;
  submitLabel: string;
  onSubmit: (values: MemberFormValues) => Promise<unknown>;
  onCancel?: () => void;
};

export function MemberForm({ defaultValues, submitLabel, onSubmit, onCancel }: MemberFormProps) {
  const { register, formState, problem, submit } = useServerForm<MemberFormValues>({
    schema: memberFormSchema,
    defaultValues,
    fields: MEMBER_FORM_FIELDS,
    onSubmit,
    onSaved: (_values, form) => {
      form.reset(defaultValues);
      form.setFocus('name');
    },
  });
  const { errors } = formState;
  return (
    <form onSubmit={submit} noValidate className="form form-inline">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <div className="form-row">
        <TextField label="Member name" error={errors.name?.message} {...register('name')} />
        <TextField label="Address" placeholder="10.0.0.21" error={errors.address?.message} {...register('address')} />
        <TextField label="Port" type="number" min={1} max={65535} className="field-narrow" error={errors.port?.message} {...register('port', { valueAsNumber: true })} />
        <TextField label="Weight" type="number" min={0} max={256} className="field-narrow" error={errors.weight?.message} {...register('weight', { valueAsNumber: true })} />
        <SelectField
          label="State"
          options={MEMBER_STATES.map(({ value, label }) => ({ value, label }))}
          error={errors.state?.message}
          {...register('state')}
        />
      </div>
      <div className="form-row">
        <TextField label="Max connections" type="number" min={0} hint="0 = no limit; beyond it requests queue." error={errors.max_connections?.message} {...register('max_connections', { valueAsNumber: true })} />
        <TextField label="Max queue" type="number" min={0} hint="0 = no limit." error={errors.max_queue?.message} {...register('max_queue', { valueAsNumber: true })} />
        <TextField label="Slow start (ms)" type="number" min={0} hint="Weight ramps up after recovery; 0 = off." error={errors.slowstart_ms?.message} {...register('slowstart_ms', { valueAsNumber: true })} />
        <CheckboxField label="Backup" hint="Serves only when no other member is up." error={errors.backup?.message} {...register('backup')} />
      </div>
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
