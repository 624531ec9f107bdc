import { useState } from 'react';
import { ActionsHeader, Alert, Badge, ConfirmButton, EmptyState, ErrorState, LoadingState, PageHeader, Panel, TableWrap } from '@/components';
import { usePermissions } from '@/features/auth';
import { errorMessage } from '@/lib/api';
import { formatDateTime } from '@/lib/format';
import { useCreateNode, useDeleteNode, useNewestRevision, useNodes } from '../hooks/useNodes';
import { describeConfigSync, type NewestRevision, type Node, type NodeCreated } from '../types';
import { DaemonEventsPanel } from './DaemonEventsPanel';
import { IpvsSyncPanel } from './IpvsSyncPanel';
import { JoinCodePanel } from './JoinCodePanel';
import { NodeAddressForm } from './NodeAddressForm';
import { NodeForm } from './NodeForm';
import { NodeStandbyButton } from './NodeStandbyButton';
import { ReplicationPanel } from './ReplicationPanel';
import { NodeNetworks, NodeRevision, NodeSchedulers, NodeVrrp } from './NodeStatus';
import { TokenReveal } from './TokenReveal';

type Permissions = { canOperate: boolean; canEdit: boolean };

function NodeDeleteButton({ node }: { node: Node }) {
  const remove = useDeleteNode();
  return (
    <>
      <ConfirmButton size="small" subject={`node ${node.name}`} busy={remove.isPending} onConfirm={() => remove.mutate(node.id)}>
        Delete
      </ConfirmButton>
      {remove.isError ? <Alert tone="error">{errorMessage(remove.error)}</Alert> : null}
    </>
  );
}

/** One node; an admin edits its HA address and deletes it, an operator (or admin) sets standby. */
function NodeRow({ node, newest, can }: { node: Node; newest: NewestRevision | null | undefined; can: Permissions }) {
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
      <td>{can.canEdit ? <NodeAddressForm node={node} /> : node.address ? <span className="mono">{node.address}</span> : <span className="muted">none</span>}</td>
      <td>
        <NodeVrrp node={node} />
      </td>
      <td>
        <NodeNetworks node={node} />
      </td>
      <td>
        <NodeSchedulers node={node} />
      </td>
      {can.canOperate ? (
        <td className="cell-actions">
          <NodeStandbyButton node={node} />
          {can.canEdit ? <NodeDeleteButton node={node} /> : null}
        </td>
      ) : null}
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
  const can = usePermissions();
  const nodes = useNodes();
  const newest = useNewestRevision();
  const create = useCreateNode();
  const [created, setCreated] = useState<NodeCreated | null>(null);
  return (
    <>
      <PageHeader title="Nodes" description="The appliances whose agents fetch and apply each revision." />
      <div className="stack">
        {can.canEdit ? (
          <Panel title="Add an appliance">
            <JoinCodePanel />
          </Panel>
        ) : null}
        {can.canEdit ? (
          <Panel title="Add a node">
            {created ? <TokenReveal node={created} onDismiss={() => setCreated(null)} /> : null}
            <NodeForm onSubmit={async ({ name }) => setCreated(await create.mutateAsync(name))} />
          </Panel>
        ) : null}
        <Panel title="Registered nodes">
          {nodes.isPending ? <LoadingState /> : null}
          {nodes.isError ? <ErrorState error={nodes.error} onRetry={() => void nodes.refetch()} /> : null}
          {nodes.data?.length === 0 ? (
            <EmptyState title="No nodes yet">
              <p>{can.canEdit ? 'Add a node above, then start its agent with the token.' : 'An admin registers the nodes; they then appear here.'}</p>
            </EmptyState>
          ) : null}
          {nodes.data?.length ? (
            <>
              <ConfigSyncSummary nodes={nodes.data} newest={newest.data} />
              <TableWrap label="Registered nodes">
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
                      {can.canOperate ? (
                        <ActionsHeader />
                      ) : null}
                    </tr>
                  </thead>
                  <tbody>
                    {nodes.data.map((node) => (
                      <NodeRow key={node.id} node={node} newest={newest.data} can={can} />
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            </>
          ) : null}
        </Panel>
        <DaemonEventsPanel />
        <ReplicationPanel canSwitchOver={can.canEdit} />
        <IpvsSyncPanel canEdit={can.canEdit} />
      </div>
    </>
  );
}
