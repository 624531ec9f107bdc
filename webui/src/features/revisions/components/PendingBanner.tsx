import { useState } from 'react';
import { Link, useLocation } from 'react-router-dom';
import { Button } from '@/components';
import { usePermissions } from '@/features/auth';
import { errorMessage } from '@/lib/api';
import { formatCountdown, useCountdown } from '../hooks/useCountdown';
import { useApply, useNewestRevision, usePending } from '../hooks/useRevisions';
import type { Revision } from '../types';
import { changesNotApplied } from './PendingChanges';

function AwaitingLine({ revision }: { revision: Revision }) {
  const left = useCountdown(revision.confirm_by) ?? 0;
  return (
    <div className="pending-banner-line">
      <p>
        <strong>Revision {revision.number} awaits confirmation</strong>: {formatCountdown(left)} left, then it rolls back by itself.
      </p>
      <Link to="/revisions">Confirm or roll back</Link>
    </div>
  );
}

/**
 * On every page but Apply & history itself: how many changes are not applied yet (with a
 * link to review them, and Apply for those allowed to), and a revision awaiting confirmation.
 */
export function PendingBanner() {
  const { pathname } = useLocation();
  const { canOperate } = usePermissions();
  const pending = usePending();
  const newest = useNewestRevision();
  const apply = useApply();
  const [published, setPublished] = useState<Revision>();
  if (pathname === '/revisions') return null;
  const count = pending.data?.objects.length ?? 0;
  const awaiting = newest.data?.confirm_state === 'awaiting' ? newest.data : null;
  if (!count && !awaiting && !published && !apply.isError) return null;
  const applyNow = () => {
    setPublished(undefined);
    apply.mutate({ message: '' }, { onSuccess: setPublished });
  };
  return (
    <section className="pending-banner" aria-label="Changes not applied">
      {count > 0 ? (
        <div className="pending-banner-line">
          <p role="status">
            <strong>{changesNotApplied(count)}</strong>
            <span className="muted"> — stored, but the nodes do not run them yet.</span>
          </p>
          <Link to="/revisions">Review changes</Link>
          {canOperate ? (
            <Button size="small" variant="primary" busy={apply.isPending} onClick={applyNow}>
              Apply
            </Button>
          ) : null}
        </div>
      ) : null}
      {awaiting ? <AwaitingLine revision={awaiting} /> : null}
      {published && !count ? (
        <div className="pending-banner-line">
          <p role="status">Revision {published.number} published.</p>
          <Link to="/revisions">See each node&apos;s result</Link>
          <Button size="small" variant="ghost" onClick={() => setPublished(undefined)}>
            Dismiss
          </Button>
        </div>
      ) : null}
      {apply.isError ? (
        <div className="pending-banner-line" role="alert">
          <p>Not applied: {errorMessage(apply.error)}</p>
          <Link to="/revisions">Review changes</Link>
        </div>
      ) : null}
    </section>
  );
}
