import { Link } from 'react-router-dom';
import { Badge, type BadgeTone, EmptyState, TableWrap, VrrpStateBadge } from '@/components';
import type { NodeOverview, NodeState, RevisionOverview } from '@/features/telemetry';
import { formatDateTime } from '@/lib/format';

const NODE_TONE: Record<NodeState, BadgeTone> = { online: 'success', offline: 'danger', standby: 'info', 'never-seen': 'neutral' };

function RunningRevision({ node, revision }: { node: NodeOverview; revision: RevisionOverview | null }) {
  if (node.running_revision === null) return <span className="cell-note">none yet</span>;
  const behind = revision !== null && revision.live && node.running_revision !== revision.number;
  return (
    <>
      #{node.running_revision}
      {behind ? <div className="cell-note">live is #{revision.number}: not applied here yet</div> : null}
    </>
  );
}

/** The nodes: their state, the revision they run, and their VRRP role in each HA group. */
export function NodesSummary({ nodes, revision }: { nodes: readonly NodeOverview[]; revision: RevisionOverview | null }) {
  if (nodes.length === 0) {
    return (
      <EmptyState title="No nodes registered">
        <p>
          <Link to="/nodes">Register a node</Link> to run the configuration.
        </p>
      </EmptyState>
    );
  }
  return (
    // Focusable: on a narrow screen the table scrolls sideways, and has nothing else to focus.
    <TableWrap label="Nodes">
      <table className="table">
        <caption className="visually-hidden">Nodes</caption>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">State</th>
            <th scope="col">Running revision</th>
            <th scope="col">Last seen</th>
            <th scope="col">HA roles</th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((node) => (
            <tr key={node.id}>
              <th scope="row">
                <Link to="/nodes">{node.name}</Link>
              </th>
              <td>
                <Badge tone={NODE_TONE[node.state] ?? 'neutral'}>{node.state}</Badge>
              </td>
              <td>
                <RunningRevision node={node} revision={revision} />
              </td>
              <td>{formatDateTime(node.last_seen)}</td>
              <td>
                {node.ha.length === 0 ? (
                  <span className="cell-note">no HA group</span>
                ) : (
                  <ul className="inline-list">
                    {node.ha.map((ha) => (
                      <li key={ha.group}>
                        {ha.group}: <VrrpStateBadge state={ha.state} />
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
