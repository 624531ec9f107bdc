import { Badge, type BadgeTone, ScrollText } from '@/components';
import { formatDateTime } from '@/lib/format';
import type { NodeResult, NodeResultState } from '../types';
import { ProblemList } from './ProblemList';

const TONE: Record<NodeResultState, BadgeTone> = { pending: 'info', applied: 'success', failed: 'danger' };

export function NodeStateBadge({ state }: { state: NodeResultState }) {
  return (
    <Badge tone={TONE[state]}>
      {state === 'pending' ? <span className="spinner spinner-inline" aria-hidden="true" /> : null}
      {state}
    </Badge>
  );
}

function summary(nodes: readonly NodeResult[]): string {
  const count = (state: NodeResultState) => nodes.filter((n) => n.state === state).length;
  const parts = [`${count('applied')} applied`, `${count('failed')} failed`, `${count('pending')} pending`];
  return `${nodes.length} node${nodes.length === 1 ? '' : 's'}: ${parts.join(', ')}.`;
}

/** Each node's outcome for one revision. */
export function NodeResults({ nodes, revisionNumber }: { nodes: readonly NodeResult[]; revisionNumber: number }) {
  return (
    <div className="node-results">
      <p className="muted" role="status" aria-live="polite">
        {summary(nodes)}
      </p>
      <table className="table table-compact">
        <caption className="visually-hidden">Node results for revision {revisionNumber}</caption>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Result</th>
            <th scope="col">Message</th>
            <th scope="col">Updated</th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((node) => (
            <tr key={node.node} data-state={node.state}>
              <th scope="row">{node.node}</th>
              <td>
                <NodeStateBadge state={node.state} />
              </td>
              <td className={node.state === 'failed' ? 'message-failed' : 'muted'}>
                {node.message ? <ScrollText label={`Message from ${node.node}`} className="message" text={node.message} /> : node.state === 'pending' ? 'Waiting for the agent…' : '—'}
                {node.problems.length ? <ProblemList problems={node.problems} /> : null}
              </td>
              <td className="muted nowrap">{formatDateTime(node.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
