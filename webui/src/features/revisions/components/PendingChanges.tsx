import { EmptyState, ErrorState, LoadingState, Panel } from '@/components';
import { usePending } from '../hooks/useRevisions';
import { sameAsRevision } from '../types';
import { ObjectChanges } from './ObjectChanges';

export function countChanges(count: number): string {
  return `${count} change${count === 1 ? '' : 's'}`;
}

export function changesNotApplied(count: number): string {
  return `${countChanges(count)} not applied`;
}

/** What an apply would change now: each object, field by field, against the last revision. */
export function PendingChanges() {
  const pending = usePending();
  const data = pending.data;
  return (
    <Panel title="Pending changes">
      {pending.isPending ? <LoadingState /> : null}
      {pending.isError ? <ErrorState error={pending.error} onRetry={() => void pending.refetch()} /> : null}
      {data && data.objects.length === 0 ? (
        <EmptyState title="Nothing to apply">
          <p>{sameAsRevision(data.base_revision)}</p>
        </EmptyState>
      ) : null}
      {data && data.objects.length > 0 ? (
        <>
          <p>
            <strong>{changesNotApplied(data.objects.length)}</strong>{' '}
            <span className="muted">
              {data.base_revision === null ? '(nothing applied yet).' : `since revision ${data.base_revision}.`} The nodes run them only once applied.
            </span>
          </p>
          <ObjectChanges objects={data.objects} />
        </>
      ) : null}
    </Panel>
  );
}
