import { useState } from 'react';
import { Badge, Button, EmptyState, ErrorState, LoadingState, Panel } from '@/components';
import { formatDateTime } from '@/lib/format';
import { HISTORY_PAGE_SIZE, useRevisionHistory } from '../hooks/useRevisions';
import { isSettling, type Revision } from '../types';
import { NodeStateBadge } from './NodeResults';

/** Whether every node has applied the revision (it is "live"), is still applying it, or not all did. */
function LiveBadge({ revision }: { revision: Revision }) {
  if (revision.live) return <Badge tone="success">on every node</Badge>;
  if (revision.nodes.length === 0) return <span className="muted">no nodes</span>;
  if (isSettling(revision)) return <Badge tone="info">rolling out</Badge>;
  return <Badge tone="warning">not on every node</Badge>;
}

function NodeSummary({ revision }: { revision: Revision }) {
  if (revision.nodes.length === 0) return <span className="muted">no nodes</span>;
  return (
    <ul className="inline-list">
      {revision.nodes.map((node) => (
        <li key={node.node} title={node.message || undefined}>
          <span className="node-name">{node.node}</span> <NodeStateBadge state={node.state} />
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
          <div className="table-wrap">
            <table className="table">
              <caption className="visually-hidden">Revision history</caption>
              <thead>
                <tr>
                  <th scope="col">Revision</th>
                  <th scope="col">Message</th>
                  <th scope="col">Author</th>
                  <th scope="col">Created</th>
                  <th scope="col">Live</th>
                  <th scope="col">Nodes</th>
                </tr>
              </thead>
              <tbody>
                {history.data.results.map((revision) => (
                  <tr key={revision.id}>
                    <th scope="row" className="mono">#{revision.number}</th>
                    <td>{revision.message || <span className="muted">—</span>}</td>
                    <td>{revision.author}</td>
                    <td className="nowrap">{formatDateTime(revision.created_at)}</td>
                    <td className="nowrap">
                      <LiveBadge revision={revision} />
                    </td>
                    <td>
                      <NodeSummary revision={revision} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
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
