import { useState } from 'react';
import { Alert, ConfirmButton, EmptyState, ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { errorMessage } from '@/lib/api';
import { formatDateTime } from '@/lib/format';
import { useCreateNode, useDeleteNode, useNodes } from '../hooks/useNodes';
import type { Node, NodeCreated } from '../types';
import { IpvsSyncPanel } from './IpvsSyncPanel';
import { NodeForm } from './NodeForm';
import { NodeNetworks, NodeSchedulers } from './NodeStatus';
import { TokenReveal } from './TokenReveal';

function NodeRow({ node }: { node: Node }) {
  const remove = useDeleteNode();
  return (
    <tr>
      <th scope="row">{node.name}</th>
      <td>{formatDateTime(node.last_seen)}</td>
      <td className="mono">{node.applied_revision ? `#${node.applied_revision}` : <span className="muted">none</span>}</td>
      <td>
        <NodeNetworks node={node} />
      </td>
      <td>
        <NodeSchedulers node={node} />
      </td>
      <td className="cell-actions">
        <ConfirmButton size="small" subject={`node ${node.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(node.id)}>
          Delete
        </ConfirmButton>
        {remove.isError ? <Alert tone="error">{errorMessage(remove.error)}</Alert> : null}
      </td>
    </tr>
  );
}

export function NodesPage() {
  const nodes = useNodes();
  const create = useCreateNode();
  const [created, setCreated] = useState<NodeCreated | null>(null);
  return (
    <>
      <PageHeader title="Nodes" description="The appliances whose agents fetch and apply each revision." />
      <div className="stack">
        <Panel title="Add a node">
          {created ? <TokenReveal node={created} onDismiss={() => setCreated(null)} /> : null}
          <NodeForm onSubmit={async ({ name }) => setCreated(await create.mutateAsync(name))} />
        </Panel>
        <Panel title="Registered nodes">
          {nodes.isPending ? <LoadingState /> : null}
          {nodes.isError ? <ErrorState error={nodes.error} onRetry={() => void nodes.refetch()} /> : null}
          {nodes.data?.length === 0 ? (
            <EmptyState title="No nodes yet">
              <p>Add a node above, then start its agent with the token.</p>
            </EmptyState>
          ) : null}
          {nodes.data?.length ? (
            <div className="table-wrap">
              <table className="table">
                <caption className="visually-hidden">Registered nodes</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Last seen</th>
                    <th scope="col">Applied revision</th>
                    <th scope="col">Networks</th>
                    <th scope="col">IPVS schedulers</th>
                    <th scope="col"><span className="visually-hidden">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  {nodes.data.map((node) => (
                    <NodeRow key={node.id} node={node} />
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </Panel>
        <IpvsSyncPanel />
      </div>
    </>
  );
}
