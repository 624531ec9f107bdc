import { useEffect } from 'react';
import { Alert, Button } from '@/components';
import { usePermissions } from '@/features/auth';
import { errorMessage } from '@/lib/api';
import { formatDateTime } from '@/lib/format';
import { publishProblems } from '../api/revisionsApi';
import { countdownAnnouncement, formatCountdown, useCountdown } from '../hooks/useCountdown';
import { useConfirm, useRevisionByNumber, useRollback } from '../hooks/useRevisions';
import type { Revision } from '../types';
import { ApplyProblems } from './ApplyProblems';

type ConfirmCountdownProps = {
  /** A revision whose confirm_state is awaiting. */
  revision: Revision;
  /** Called once the deadline has passed, so the caller can fetch the automatic rollback. */
  onExpired: () => void;
};

/** What happens at 0, in words. */
function Consequence({ revision }: { revision: Revision }) {
  const previous = revision.number - 1;
  return (
    <p>
      Unless confirmed by {formatDateTime(revision.confirm_by)}, Fulcrum rolls back by itself:{' '}
      {previous > 0
        ? `it publishes a new revision that restores the objects of revision ${previous}.`
        : 'it publishes a new revision without any of these objects (there is no earlier revision).'}
    </p>
  );
}

/**
 * A revision applied with confirm, counting down to its automatic rollback, with Confirm and
 * "Roll back now" for those allowed to. The visible timer ticks every second; screen readers
 * hear it once a minute and in the last ten seconds.
 */
export function ConfirmCountdown({ revision, onExpired }: ConfirmCountdownProps) {
  const { canOperate } = usePermissions();
  const left = useCountdown(revision.confirm_by) ?? 0;
  const previousNumber = revision.number > 1 ? revision.number - 1 : null;
  const previous = useRevisionByNumber(previousNumber, canOperate);
  const confirm = useConfirm();
  const rollback = useRollback();
  const expired = left === 0;
  useEffect(() => {
    if (expired) onExpired();
  }, [expired, onExpired]);
  const problems = rollback.isError ? publishProblems(rollback.error) : null;
  return (
    <section className="confirm-countdown" aria-labelledby="confirm-countdown-title">
      <h3 id="confirm-countdown-title">Revision {revision.number} awaits confirmation</h3>
      <p className="countdown" role="timer" aria-label={`Time left to confirm revision ${revision.number}`}>
        {formatCountdown(left)}
      </p>
      <p className="visually-hidden" role="status" aria-live="polite">
        {`Revision ${revision.number}: ${countdownAnnouncement(left)}`}
      </p>
      {expired ? <p className="muted">The deadline has passed: rolling back…</p> : <Consequence revision={revision} />}
      {canOperate && !expired ? (
        <div className="form-actions">
          <Button variant="primary" busy={confirm.isPending} onClick={() => confirm.mutate(revision.id)}>
            Confirm
          </Button>
          {previous.data ? (
            <Button
              variant="danger"
              busy={rollback.isPending}
              onClick={() => rollback.mutate({ id: previous.data!.id, message: `rollback of r${revision.number} (not confirmed)` })}
            >
              Roll back now
            </Button>
          ) : null}
        </div>
      ) : null}
      {!canOperate ? <p className="muted">An operator or an admin can confirm it or roll it back.</p> : null}
      {confirm.isError ? (
        <Alert tone="error" title="Not confirmed">
          {errorMessage(confirm.error)}
        </Alert>
      ) : null}
      {problems ? <ApplyProblems error={problems} title="Not rolled back" intro="Nothing changed; the revision still awaits confirmation:" /> : null}
      {rollback.isError && !problems ? (
        <Alert tone="error" title="Not rolled back">
          {errorMessage(rollback.error)}
        </Alert>
      ) : null}
    </section>
  );
}
