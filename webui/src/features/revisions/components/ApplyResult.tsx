import { Link } from 'react-router-dom';
import { Alert, ErrorState } from '@/components';
import { useRevisionProgress } from '../hooks/useRevisions';
import { isSettling, type Revision } from '../types';
import { NodeResults } from './NodeResults';

function Outcome({ revision }: { revision: Revision }) {
  if (revision.nodes.length === 0) {
    return (
      <Alert tone="warning" title={`Revision ${revision.number} is stored, but no node runs it`}>
        <p>
          No nodes are registered. <Link to="/nodes">Add a node</Link> and start its agent; it fetches the newest revision.
        </p>
      </Alert>
    );
  }
  if (isSettling(revision)) return null;
  const failed = revision.nodes.filter((n) => n.state === 'failed').length;
  return failed ? (
    <Alert tone="error" title={`Revision ${revision.number} failed on ${failed} node${failed === 1 ? '' : 's'}`}>
      <p>Those nodes keep their last good configuration. The message below says why.</p>
    </Alert>
  ) : (
    <Alert tone="success" title={`Revision ${revision.number} is applied on every node`} />
  );
}

/** The revision just applied, followed live until each node has reported. */
export function ApplyResult({ revisionId }: { revisionId: number }) {
  const progress = useRevisionProgress(revisionId);
  if (progress.isError) return <ErrorState error={progress.error} onRetry={() => void progress.refetch()} />;
  const revision = progress.data;
  if (!revision) return null;
  return (
    <section className="apply-result" aria-labelledby="apply-result-title">
      <h3 id="apply-result-title">
        Revision {revision.number}
        {revision.message ? <span className="muted"> — {revision.message}</span> : null}
      </h3>
      <Outcome revision={revision} />
      {revision.nodes.length ? <NodeResults nodes={revision.nodes} revisionNumber={revision.number} /> : null}
    </section>
  );
}
