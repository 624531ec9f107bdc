import { type UseFormReturn, useFieldArray, useWatch } from 'react-hook-form';
import { Button, CheckboxField, FormSection, LinesField, SelectField, TextField } from '@/components';
import {
  CONDITION_KIND_OPTIONS,
  CONDITION_KINDS,
  type ConditionKind,
  emptyCondition,
  isNamedKind,
  isPresenceKind,
  type RuleFormValues,
} from '../types';

const MAX_CONDITIONS = 16;

function ConditionRow({ form, index, onRemove }: { form: UseFormReturn<RuleFormValues>; index: number; onRemove?: () => void }) {
  const { register, control, formState } = form;
  const kind = useWatch({ control, name: `conditions.${index}.kind` }) as ConditionKind;
  const errors = formState.errors.conditions?.[index];
  const nameLabel = kind.startsWith('header') ? 'Header name' : kind.startsWith('cookie') ? 'Cookie name' : 'Parameter name';
  return (
    <div className="row-editor" role="group" aria-label={`Condition ${index + 1}`}>
      <div className="row-editor-header">
        <h4>{index === 0 ? 'When' : 'And'}</h4>
        {onRemove ? (
          <Button variant="ghost" size="small" className="button-danger-text" onClick={onRemove} aria-label={`Remove condition ${index + 1}`}>
            Remove
          </Button>
        ) : null}
      </div>
      <div className="form-row">
        <SelectField label="Match" options={CONDITION_KIND_OPTIONS} error={errors?.kind?.message} {...register(`conditions.${index}.kind`)} />
        {isNamedKind(kind) ? (
          <TextField label={nameLabel} placeholder={kind.startsWith('header') ? 'X-Env' : 'session'} error={errors?.name?.message} {...register(`conditions.${index}.name`)} />
        ) : null}
      </div>
      {isPresenceKind(kind) ? null : (
        <LinesField label="Values" hint="Any of them matches." placeholder={CONDITION_KINDS[kind].placeholder} error={errors?.values?.message} {...register(`conditions.${index}.values`)} />
      )}
      <CheckboxField label="Negate (match when this does not hold)" error={errors?.negate?.message} {...register(`conditions.${index}.negate`)} />
    </div>
  );
}

/** The rule's conditions: all must hold (AND); each matches any of its values (OR). */
export function ConditionsEditor({ form }: { form: UseFormReturn<RuleFormValues> }) {
  const { fields, append, remove } = useFieldArray({ control: form.control, name: 'conditions' });
  const errors = form.formState.errors.conditions;
  const listError = errors?.message ?? errors?.root?.message;
  return (
    <FormSection title="Conditions" description="All conditions must hold; a condition with several values holds when any of them matches.">
      {listError ? <p className="field-error">{listError}</p> : null}
      {fields.map((field, index) => (
        <ConditionRow key={field.id} form={form} index={index} onRemove={fields.length > 1 ? () => remove(index) : undefined} />
      ))}
      <div>
        <Button size="small" disabled={fields.length >= MAX_CONDITIONS} onClick={() => append(emptyCondition())}>
          Add condition
        </Button>
      </div>
    </FormSection>
  );
}
