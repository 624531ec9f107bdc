import { useState } from 'react';
import { Alert, Badge, ConfirmButton, EmptyState, ErrorState, LoadingState, PageHeader, Panel } from '@/components';
import { errorMessage } from '@/lib/api';
import { formatDateTime } from '@/lib/format';
import { useCreateNode, useDeleteNode, useNewestRevision, useNodes } from '../hooks/useNodes';
import { describeConfigSync, type NewestRevision, type Node, type NodeCreated } from '../types';
import { IpvsSyncPanel } from './IpvsSyncPanel';
import { NodeAddressForm } from './NodeAddressForm';
import { NodeForm } from './NodeForm';
import { NodeStandbyButton } from './NodeStandbyButton';
import { NodeNetworks, NodeRevision, NodeSchedulers, NodeVrrp } from './NodeStatus';
import { TokenReveal } from './TokenReveal';

function NodeRow({ node, newest }: { node: Node; newest: NewestRevision | null | undefined }) {
  const remove = useDeleteNode();
  return (
    <tr>
      <th scope="row">
        {node.name}
        {node.standby ? (
          <div>
            <Badge tone="warning">standby</Badge>
            <span className="cell-note"> master roles handed over</span>
          </div>
        ) : null}
      </th>
      <td>{formatDateTime(node.last_seen)}</td>
      <td className="nowrap">
        <NodeRevision node={node} newest={newest} />
      </td>
      <td>
        <NodeAddressForm node={node} />
      </td>
      <td>
        <NodeVrrp node={node} />
      </td>
      <td>
        <NodeNetworks node={node} />
      </td>
      <td>
        <NodeSchedulers node={node} />
      </td>
      <td className="cell-actions">
        <NodeStandbyButton node={node} />
        <ConfirmButton size="small" subject={`node ${node.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(node.id)}>
          Delete
        </ConfirmButton>
        {remove.isError ? <Alert tone="error">{errorMessage(remove.error)}</Alert> : null}
      </td>
    </tr>
  );
}

/** Whether every node runs the newest revision, and which do not. */
function ConfigSyncSummary({ nodes, newest }: { nodes: readonly Node[]; newest: NewestRevision | null | undefined }) {
  if (!newest) return <p className="muted">Nothing applied yet.</p>;
  const text = describeConfigSync(nodes, newest);
  return (
    <p className="config-sync" role="status">
      {newest.live ? <Badge tone="success">in sync</Badge> : <Badge tone="warning">not in sync</Badge>} {text}
    </p>
  );
}

export function NodesPage() {
  const nodes = useNodes();
  const newest = useNewestRevision();
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
            <>
              <ConfigSyncSummary nodes={nodes.data} newest={newest.data} />
              <div className="table-wrap">
                <table className="table">
                  <caption className="visually-hidden">Registered nodes</caption>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Last seen</th>
                      <th scope="col">Runs revision</th>
                      <th scope="col">HA address</th>
                      <th scope="col">VRRP (state, priority)</th>
                      <th scope="col">Networks</th>
                      <th scope="col">IPVS schedulers</th>
                      <th scope="col"><span className="visually-hidden">Actions</span></th>
                    </tr>
                  </thead>
                  <tbody>
                    {nodes.data.map((node) => (
                      <NodeRow key={node.id} node={node} newest={newest.data} />
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          ) : null}
        </Panel>
        <IpvsSyncPanel />
      </div>
    </>
  );
}
