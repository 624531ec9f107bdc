import { useState } from 'react';
import { Link } from 'react-router-dom';
import { Badge, Button, EmptyState, ErrorState, LoadingState, Panel, TableWrap } from '@/components';
import { formatDateTime } from '@/lib/format';
import { HISTORY_PAGE_SIZE, useRevisionHistory } from '../hooks/useRevisions';
import { isSettling, type Revision } from '../types';
import { ConfirmStateBadge } from './ConfirmStateBadge';
import { NodeStateBadge } from './NodeResults';
import { RollbackOfLink } from './RollbackOfLink';

/** Whether every node has applied the revision (it is "live"), is still applying it, or not all did. */
function LiveBadge({ revision }: { revision: Revision }) {
  if (revision.live) return <Badge tone="success">on every node</Badge>;
  if (revision.nodes.length === 0) return <span className="muted">no nodes</span>;
  if (isSettling(revision)) return <Badge tone="info">rolling out</Badge>;
  return <Badge tone="warning">not on every node</Badge>;
}

/** Every node runs this revision now (the newest may not be: a node that failed keeps its last good one). */
function isRunning(revision: Revision): boolean {
  return revision.nodes.length > 0 && revision.nodes.every((node) => node.running_revision === revision.number);
}

/** Each node's state for the revision, the older one it still runs if it has not taken it, and why a failure failed. */
function NodeSummary({ revision }: { revision: Revision }) {
  if (revision.nodes.length === 0) return <span className="muted">no nodes</span>;
  return (
    <ul className="node-summary">
      {revision.nodes.map((node) => (
        <li key={node.node}>
          <span className="node-name">{node.node}</span> <NodeStateBadge state={node.state} />
          {node.running_revision !== null && node.running_revision < revision.number ? (
            <span className="muted"> runs #{node.running_revision}</span>
          ) : null}
          {node.state === 'failed' && node.message ? <span className="node-reason message-failed">{node.message}</span> : null}
        </li>
      ))}
    </ul>
  );
}

export function RevisionHistory() {
  const [page, setPage] = useState(0);
  const history = useRevisionHistory(page);
  const count = history.data?.count ?? 0;
  const pages = Math.max(1, Math.ceil(count / HISTORY_PAGE_SIZE));
  const idsByNumber = new Map((history.data?.results ?? []).map((r) => [r.number, r.id]));
  return (
    <Panel title="History">
      {history.isPending ? <LoadingState /> : null}
      {history.isError ? <ErrorState error={history.error} onRetry={() => void history.refetch()} /> : null}
      {history.data && count === 0 ? (
        <EmptyState title="Nothing applied yet">
          <p>Each apply adds a revision here with every node's result.</p>
        </EmptyState>
      ) : null}
      {history.data && count > 0 ? (
        <>
          <TableWrap label="Revisions">
            <table className="table">
              <caption className="visually-hidden">Revision history</caption>
              <thead>
                <tr>
                  <th scope="col">Revision</th>
                  <th scope="col">Message</th>
                  <th scope="col">By</th>
                  <th scope="col">When</th>
                  <th scope="col">State</th>
                  <th scope="col">Nodes</th>
                </tr>
              </thead>
              <tbody>
                {history.data.results.map((revision) => (
                  <tr key={revision.id}>
                    <th scope="row" className="mono">
                      <Link to={`/revisions/${revision.id}`}>
                        #{revision.number}
                      </Link>
                    </th>
                    <td>
                      {revision.message || <span className="muted">—</span>}
                      {revision.rollback_of !== null ? (
                        <span className="revision-note">
                          <RollbackOfLink number={revision.rollback_of} known={idsByNumber} />
                        </span>
                      ) : null}
                    </td>
                    <td>{revision.author ?? <span className="muted">system</span>}</td>
                    <td className="nowrap">{formatDateTime(revision.created_at)}</td>
                    <td className="nowrap">
                      <span className="badge-stack">
                        {isRunning(revision) ? <Badge tone="info">running now</Badge> : null}
                        <LiveBadge revision={revision} />
                        <ConfirmStateBadge state={revision.confirm_state} />
                      </span>
                    </td>
                    <td>
                      <NodeSummary revision={revision} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          {pages > 1 ? (
            <nav className="pager" aria-label="History pages">
              <Button size="small" disabled={page === 0} onClick={() => setPage((p) => p - 1)}>
                Newer
              </Button>
              <span className="muted">
                Page {page + 1} of {pages}
              </span>
              <Button size="small" disabled={page + 1 >= pages} onClick={() => setPage((p) => p + 1)}>
                Older
              </Button>
            </nav>
          ) : null}
        </>
      ) : null}
    </Panel>
  );
}
