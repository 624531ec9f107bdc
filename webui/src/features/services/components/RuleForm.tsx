import { type UseFormReturn, useWatch } from 'react-hook-form';
import { Alert, Button, CheckboxField, FormActions, FormSection, SelectField, TextField } from '@/components';
import { useServerForm } from '@/lib/forms';
import { NAME_HELP } from '@/lib/validation';
import {
  DENY_STATUSES,
  isTerminalAction,
  type PoolChoice,
  REDIRECT_CODES,
  RULE_ACTIONS,
  type RuleAction,
  type RuleFormValues,
  ruleFormFields,
  ruleFormSchema,
} from '../types';
import { ConditionsEditor } from './ConditionsEditor';

type RuleFormProps = {
  defaultValues: RuleFormValues;
  pools: readonly PoolChoice[];
  submitLabel: string;
  onSubmit: (values: RuleFormValues) => Promise<unknown>;
  onCancel?: () => void;
};

const asOptions = (values: readonly number[]) => values.map((value) => ({ value: String(value), label: String(value) }));

function ActionFields({ form, action, pools }: { form: UseFormReturn<RuleFormValues>; action: RuleAction; pools: readonly PoolChoice[] }) {
  const { register, formState } = form;
  const { errors } = formState;
  if (action === 'use_pool') {
    const options = pools.map((pool) => ({ value: String(pool.id), label: pool.name }));
    return <SelectField label="Pool" placeholder="Choose a pool…" options={options} error={errors.pool?.message} {...register('pool')} />;
  }
  if (action === 'redirect') {
    return (
      <div className="form-row">
        <SelectField label="Redirect code" className="field-narrow" options={asOptions(REDIRECT_CODES)} error={errors.redirect_code?.message} {...register('redirect_code')} />
        <TextField label="Location" placeholder="https://example.com/new or /new" error={errors.redirect_location?.message} {...register('redirect_location')} />
      </div>
    );
  }
  if (action === 'deny') {
    return <SelectField label="Deny status" className="field-narrow" options={asOptions(DENY_STATUSES)} error={errors.deny_status?.message} {...register('deny_status')} />;
  }
  return (
    <div className="form-row">
      <TextField label="Header name" placeholder="X-Forwarded-Proto" error={errors.header_name?.message} {...register('header_name')} />
      {action.startsWith('set_') ? <TextField label="Header value" error={errors.header_value?.message} {...register('header_value')} /> : null}
    </div>
  );
}

export function RuleForm({ defaultValues, pools, submitLabel, onSubmit, onCancel }: RuleFormProps) {
  const form = useServerForm<RuleFormValues>({
    schema: ruleFormSchema,
    defaultValues,
    fields: (values) => ruleFormFields(values.action, values.conditions),
    onSubmit,
    onSaved: (_values, rhf) => rhf.reset(defaultValues),
  });
  const { register, control, formState, problem, submit } = form;
  const { errors } = formState;
  const action = useWatch({ control, name: 'action' });
  return (
    <form onSubmit={submit} noValidate className="form form-wide">
      {problem ? <Alert tone="error" title="Not saved">{problem}</Alert> : null}
      <div className="form-row">
        <TextField label="Rule name" hint={NAME_HELP} error={errors.name?.message} {...register('name')} />
      </div>
      <CheckboxField label="Enabled" error={errors.enabled?.message} {...register('enabled')} />
      <ConditionsEditor form={form} />
      <FormSection
        title="Action"
        description={isTerminalAction(action) ? 'When the rule matches, evaluation stops here.' : 'Applied when the rule matches; evaluation goes on to the next rule.'}
      >
        <SelectField label="Then" options={RULE_ACTIONS} error={errors.action?.message} {...register('action')} />
        <ActionFields form={form} action={action} pools={pools} />
      </FormSection>
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
