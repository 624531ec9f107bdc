import { useState } from 'react';
import { Alert, Button } from '@/components';
import { useServerForm } from '@/lib/forms';
import { useSaveNodeAddress } from '../hooks/useNodes';
import { NODE_ADDRESS_FORM_FIELDS, type Node, type NodeAddressFormValues, nodeAddressFormSchema } from '../types';

/**
 * The node's own address on the HA segment, edited in its row: its VRRP adverts come from
 * it and its HAProxy peers reach it there. Every node of a group with peers needs one.
 */
export function NodeAddressForm({ node }: { node: Pick<Node, 'id' | 'name' | 'address'> }) {
  const save = useSaveNodeAddress(node.id);
  const [status, setStatus] = useState('');
  const { register, formState, problem, submit } = useServerForm<NodeAddressFormValues>({
    schema: nodeAddressFormSchema,
    defaultValues: { address: node.address ?? '' },
    fields: NODE_ADDRESS_FORM_FIELDS,
    onSubmit: async ({ address }) => {
      setStatus('');
      await save.mutateAsync(address || null);
    },
    onSaved: (values, form) => {
      form.reset(values);
      setStatus(values.address ? 'Saved; apply to use it.' : 'Removed; apply to use it.');
    },
  });
  const error = formState.errors.address?.message;
  const errorId = `address-error-${node.id}`;
  return (
    <div className="runtime">
      <form className="address-form" onSubmit={submit} noValidate>
        <input
          type="text"
          inputMode="decimal"
          spellCheck={false}
          placeholder="none"
          aria-label={`HA address of ${node.name}`}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? errorId : undefined}
          {...register('address')}
        />
        <Button size="small" type="submit" busy={formState.isSubmitting} aria-label={`Save HA address of ${node.name}`}>
          Save
        </Button>
      </form>
      {error ? (
        <p id={errorId} className="field-error runtime-status">
          {error}
        </p>
      ) : null}
      <span role="status" className="runtime-status">
        {status}
      </span>
      {problem ? <Alert tone="error">{problem}</Alert> : null}
    </div>
  );
}
