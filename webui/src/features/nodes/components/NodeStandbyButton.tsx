import { useState } from 'react';
import { Alert, ConfirmButton } from '@/components';
import { errorMessage } from '@/lib/api';
import { useNodeStandby } from '../hooks/useNodes';
import type { Node } from '../types';

/**
 * Maintenance: the node hands its master roles to its peers now (its VRRP instances go to
 * FAULT, whatever preempt says), or takes part again, as a revision of its own.
 */
export function NodeStandbyButton({ node }: { node: Pick<Node, 'id' | 'name' | 'standby'> }) {
  const standby = useNodeStandby();
  const [status, setStatus] = useState('');
  const toggle = () => {
    const next = !node.standby;
    setStatus('');
    standby.mutate(
      { id: node.id, standby: next },
      {
        onSuccess: ({ revision }) =>
          setStatus(next ? `${node.name} hands over its master roles: revision ${revision}.` : `${node.name} takes part again: revision ${revision}.`),
      },
    );
  };
  return (
    <div className="runtime">
      {node.standby ? (
        <ConfirmButton size="small" subject={`node ${node.name}`} label={`Take part again: ${node.name}`} confirmLabel="Yes, take part" busy={standby.isPending} onConfirm={toggle}>
          Take part again
        </ConfirmButton>
      ) : (
        <ConfirmButton
          size="small"
          subject={`node ${node.name}`}
          label={`Hand over master roles of ${node.name}`}
          confirmLabel="Yes, hand over"
          busy={standby.isPending}
          onConfirm={toggle}
        >
          Hand over master roles
        </ConfirmButton>
      )}
      <span role="status" className="runtime-status">
        {status}
      </span>
      {standby.isError ? <Alert tone="error">{errorMessage(standby.error)}</Alert> : null}
    </div>
  );
}
