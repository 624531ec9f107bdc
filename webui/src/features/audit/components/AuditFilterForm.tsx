import { type FormEvent, useState } from 'react';
import { Button, FormActions, SelectField, TextField } from '@/components';
import { type AuditFilters, KNOWN_ACTIONS, NO_FILTERS, OBJECT_TYPES, STATUS_OPTIONS } from '../types';

type AuditFilterFormProps = {
  applied: AuditFilters;
  onApply: (filters: AuditFilters) => void;
  /** The API's refusal of a filter, by its name. */
  errors: Record<string, string>;
};

/** Every filter the audit API offers; applied together with the button (and kept in the address). */
export function AuditFilterForm({ applied, onApply, errors }: AuditFilterFormProps) {
  const [draft, setDraft] = useState<AuditFilters>(applied);
  const field = (name: keyof AuditFilters) => ({
    value: draft[name],
    error: errors[name],
    onChange: (event: { target: { value: string } }) => setDraft((d) => ({ ...d, [name]: event.target.value })),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onApply(draft);
  };
  return (
    <form onSubmit={submit} noValidate className="form form-inline" aria-label="Filter the audit log" role="search">
      <div className="form-row">
        <TextField label="User" autoComplete="off" hint="The exact user name." {...field('actor')} />
        <TextField label="Action" list="audit-actions" autoComplete="off" hint="One, or several separated by commas." {...field('action')} />
        <TextField label="Object kind" list="audit-object-types" autoComplete="off" {...field('object_type')} />
        <TextField label="Object name" autoComplete="off" hint="Exact, any case." {...field('object_name')} />
      </div>
      <div className="form-row">
        <SelectField label="Outcome" placeholder="Any" options={STATUS_OPTIONS} {...field('status')} />
        <TextField label="From" type="datetime-local" step={1} {...field('since')} />
        <TextField label="Before" type="datetime-local" step={1} {...field('until')} />
        <TextField label="Text" type="search" hint="In the path, object name, user or detail." {...field('q')} />
      </div>
      <datalist id="audit-actions">
        {KNOWN_ACTIONS.map((action) => (
          <option key={action} value={action} />
        ))}
      </datalist>
      <datalist id="audit-object-types">
        {OBJECT_TYPES.map((type) => (
          <option key={type} value={type} />
        ))}
      </datalist>
      <FormActions>
        <Button type="submit" variant="primary">
          Apply filters
        </Button>
        <Button
          variant="ghost"
          onClick={() => {
            setDraft(NO_FILTERS);
            onApply(NO_FILTERS);
          }}
        >
          Clear filters
        </Button>
      </FormActions>
    </form>
  );
}
