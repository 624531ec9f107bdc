import { type UseFormReturn, useFieldArray, useWatch } from 'react-hook-form';
import { Button, FormSection, SelectField, TextField } from '@/components';
import { emptyNodeRow, type HaGroupFormValues, type HaNode, PRIORITY_MAX, PRIORITY_MIN } from '../types';

const MAX_NODES = 32;
const number = { valueAsNumber: true } as const;

type RowProps = { form: UseFormReturn<HaGroupFormValues>; index: number; nodes: readonly HaNode[]; peers: boolean; onRemove?: () => void };

function NodeRow({ form, index, nodes, peers, onRemove }: RowProps) {
  const { register, control, formState } = form;
  const errors = formState.errors.nodes?.[index];
  const chosenId = useWatch({ control, name: `nodes.${index}.node` });
  const chosen = nodes.find((node) => String(node.id) === chosenId);
  const options = nodes.map((node) => ({ value: String(node.id), label: node.address ? `${node.name} (${node.address})` : `${node.name} (no address)` }));
  const needsAddress = peers && chosen && !chosen.address;
  return (
    <div className="row-editor" role="group" aria-label={`Node ${index + 1}`}>
      <div className="row-editor-header">
        <h4>{chosen ? chosen.name : `Node ${index + 1}`}</h4>
        {onRemove ? (
          <Button variant="ghost" size="small" className="button-danger-text" onClick={onRemove} aria-label={`Remove node ${index + 1}`}>
            Remove
          </Button>
        ) : null}
      </div>
      <div className="form-row">
        <SelectField
          label="Node"
          placeholder="Choose a node…"
          options={options}
          hint={needsAddress ? `With peers, ${chosen.name} needs its HA address (Nodes page).` : undefined}
          error={errors?.node?.message}
          {...register(`nodes.${index}.node`)}
        />
        <TextField
          label="Priority"
          type="number"
          min={PRIORITY_MIN}
          max={PRIORITY_MAX}
          className="field-narrow"
          hint={`${PRIORITY_MIN}-${PRIORITY_MAX}; highest is master.`}
          error={errors?.priority?.message}
          {...register(`nodes.${index}.priority`, number)}
        />
        <TextField label="Interface override" placeholder="the group's" hint="Only if this node's NIC is named differently." error={errors?.interface?.message} {...register(`nodes.${index}.interface`)} />
      </div>
    </div>
  );
}

/** The group's nodes, each with its own priority and, where its NIC is named differently, interface. */
export function HaGroupNodesEditor({ form, nodes }: { form: UseFormReturn<HaGroupFormValues>; nodes: readonly HaNode[] }) {
  const { fields, append, remove } = useFieldArray({ control: form.control, name: 'nodes' });
  const errors = form.formState.errors.nodes;
  const listError = errors?.message ?? errors?.root?.message;
  const lowest = Math.min(...form.getValues('nodes').map((row) => row.priority).filter(Number.isInteger), PRIORITY_MAX + 1);
  return (
    <FormSection
      title="Nodes"
      description="The node with the highest priority holds the VIPs; the others take over in priority order. Each node needs its own priority."
    >
      {listError ? <p className="field-error">{listError}</p> : null}
      {fields.map((field, index) => (
        <NodeRow key={field.id} form={form} index={index} nodes={nodes} peers={fields.length > 1} onRemove={fields.length > 1 ? () => remove(index) : undefined} />
      ))}
      <div>
        <Button size="small" disabled={fields.length >= MAX_NODES} onClick={() => append(emptyNodeRow(Math.max(PRIORITY_MIN, lowest - 50)))}>
          Add a node
        </Button>
      </div>
    </FormSection>
  );
}
