import { useState } from 'react';
import { Link, useLocation } from 'react-router-dom';
import { Button } from '@/components';
import { usePermissions } from '@/features/auth';
import { errorMessage } from '@/lib/api';
import { nothingToApply } from '../api/revisionsApi';
import { formatCountdown, useCountdown } from '../hooks/useCountdown';
import { useApply, useNewestRevision, usePendingCount, usePendingHead } from '../hooks/useRevisions';
import { type Revision, sameAsRevision } from '../types';
import { ApplyConfirmStep, LISTED } from './ApplyConfirmStep';
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

/** Why the last Apply published nothing: nothing was left to apply, or the API's reasons. */
function RefusedLine({ error, onDismiss }: { error: Error; onDismiss: () => void }) {
  const nothing = nothingToApply(error);
  if (nothing) {
    return (
      <div className="pending-banner-line">
        <p role="status">
          <strong>Nothing to apply.</strong> {sameAsRevision(nothing.base_revision)}
        </p>
        <Button size="small" variant="ghost" onClick={onDismiss}>
          Dismiss
        </Button>
      </div>
    );
  }
  return (
    <div className="pending-banner-line" role="alert">
      <p>Not applied: {errorMessage(error)}</p>
      <Link to="/revisions">Review changes</Link>
    </div>
  );
}

/**
 * On every page but Apply & history itself: how many changes are not applied yet (with a
 * link to review them, and Apply for those allowed to: a step that names the changes and
 * asks for a message), and a revision awaiting confirmation. With nothing pending there is
 * nothing to apply, and no Apply. It polls the count (revisions/pending/count/); the first few
 * changes are read only for the Apply step, however many there are.
 */
export function PendingBanner() {
  const { pathname } = useLocation();
  const { canOperate } = usePermissions();
  const [asking, setAsking] = useState(false);
  const count = usePendingCount().data?.count ?? 0;
  const pending = usePendingHead(LISTED, asking); // the first few objects, only for the Apply step
  const newest = useNewestRevision();
  const apply = useApply();
  const [published, setPublished] = useState<Revision>();
  if (asking && !count) setAsking(false); // applied meanwhile, here or elsewhere: the step is over
  if (pathname === '/revisions') return null;
  const awaiting = newest.data?.confirm_state === 'awaiting' ? newest.data : null;
  if (!count && !awaiting && !published && !apply.isError) return null;
  const applyNow = (message: string) => {
    setPublished(undefined);
    apply.mutate(
      { message },
      {
        onSuccess: (revision) => {
          setPublished(revision);
          setAsking(false);
        },
      },
    );
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
          {canOperate && !asking ? (
            <Button size="small" variant="primary" onClick={() => setAsking(true)}>
              Apply
            </Button>
          ) : null}
        </div>
      ) : null}
      {count > 0 && canOperate && asking ? (
        pending.data ? (
          <ApplyConfirmStep
            changes={pending.data.objects}
            count={pending.data.count}
            busy={apply.isPending}
            onApply={applyNow}
            onCancel={() => setAsking(false)}
          />
        ) : (
          <p role="status" className="muted">
            {pending.isError ? `The changes could not be read: ${errorMessage(pending.error)}` : 'Reading the changes…'}
          </p>
        )
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
      {apply.isError ? <RefusedLine error={apply.error} onDismiss={() => apply.reset()} /> : null}
    </section>
  );
}
