import { useCallback, useState } from 'react';
import { Link } from 'react-router-dom';
import { Alert, Button, Panel } from '@/components';
import { useNewestRevision, useRevisionProgress } from '../hooks/useRevisions';
import type { Revision } from '../types';
import { ConfirmCountdown } from './ConfirmCountdown';

function RevisionLink({ revision }: { revision: Revision }) {
  return <Link to={`/revisions/${revision.id}`}>revision {revision.number}</Link>;
}

/** How a revision that awaited confirmation ended, and the revision that undid it if any. */
function Outcome({ awaited, newest }: { awaited: Revision; newest: Revision | null }) {
  const undone = newest && newest.number > awaited.number && newest.rollback_of !== null ? newest : null;
  if (awaited.confirm_state === 'confirmed') {
    return <Alert tone="success" title={`Revision ${awaited.number} is confirmed: it stays applied.`} />;
  }
  if (awaited.confirm_state === 'rollback-failed') {
    return (
      <Alert tone="error" title={`Revision ${awaited.number} was not confirmed, and its automatic rollback failed`}>
        <p>{awaited.confirm_problem}</p>
        <p>The nodes still run revision {awaited.number}. Fix the problem, or roll back to an earlier revision from the history.</p>
      </Alert>
    );
  }
  if (awaited.confirm_state !== 'rolled-back') return null;
  const automatic = (undone?.message ?? '').startsWith(`automatic rollback: r${awaited.number} `);
  return (
    <Alert tone="warning" title={`Revision ${awaited.number} was rolled back`}>
      {undone ? (
        <p>
          {automatic ? 'It was not confirmed in time: Fulcrum published ' : 'It was rolled back by hand as '}
          <RevisionLink revision={undone} />
          {undone.rollback_of !== null ? `, which restores the objects of revision ${undone.rollback_of}.` : '.'}
        </p>
      ) : null}
    </Alert>
  );
}

/**
 * Apply with confirm, after the apply: the countdown while the newest revision awaits
 * confirmation, then how it ended (confirmed, or the revision that rolled it back).
 */
export function ConfirmPanel() {
  const newest = useNewestRevision();
  const [watchedId, setWatchedId] = useState<number>();
  const awaiting = newest.data?.confirm_state === 'awaiting' ? newest.data : null;
  // Remember the revision seen awaiting, to say how it ended once it no longer awaits.
  if (awaiting && awaiting.id !== watchedId) setWatchedId(awaiting.id);
  const watched = useRevisionProgress(awaiting ? undefined : watchedId);
  const { refetch } = newest;
  // The API rolls back a late revision when its history is read: read it at the deadline.
  const onExpired = useCallback(() => {
    void refetch();
  }, [refetch]);
  if (awaiting) {
    return (
      <Panel title="Apply with confirm">
        <ConfirmCountdown revision={awaiting} onExpired={onExpired} />
      </Panel>
    );
  }
  if (watchedId === undefined || !watched.data) return null;
  return (
    <Panel title="Apply with confirm" actions={<Button size="small" variant="ghost" onClick={() => setWatchedId(undefined)}>Dismiss</Button>}>
      <Outcome awaited={watched.data} newest={newest.data ?? null} />
    </Panel>
  );
}
