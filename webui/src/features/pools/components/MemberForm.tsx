import { Alert, Button, FormActions, SelectField, TextField } from '@/components';
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
