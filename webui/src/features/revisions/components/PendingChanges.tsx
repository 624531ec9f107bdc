import { EmptyState, ErrorState, LoadingState, Panel } from '@/components';
import { objectsOf, usePendingPages } from '../hooks/useRevisions';
import { sameAsRevision } from '../types';
import { describeSummary, ObjectChanges, ShowMore } from './ObjectChanges';

export function countChanges(count: number): string {
  return `${count} change${count === 1 ? '' : 's'}`;
}

export function changesNotApplied(count: number): string {
  return `${countChanges(count)} not applied`;
}

/** What an apply would change now: each object, field by field, against the last revision, a page at a time. */
export function PendingChanges() {
  const pending = usePendingPages();
  const first = pending.data?.pages[0];
  const objects = pending.data ? objectsOf(pending.data.pages) : [];
  return (
    <Panel title="Pending changes">
      {pending.isPending ? <LoadingState /> : null}
      {pending.isError ? <ErrorState error={pending.error} onRetry={() => void pending.refetch()} /> : null}
      {first && first.count === 0 ? (
        <EmptyState title="Nothing to apply">
          <p>{sameAsRevision(first.base_revision)}</p>
        </EmptyState>
      ) : null}
      {first && first.count > 0 ? (
        <>
          <p>
            <strong>{changesNotApplied(first.count)}</strong>{' '}
            <span className="muted">
              ({describeSummary(first.summary)}) {first.base_revision === null ? '(nothing applied yet).' : `since revision ${first.base_revision}.`} The
              nodes run them only once applied.
            </span>
          </p>
          <ObjectChanges objects={objects} />
          <ShowMore shown={objects.length} count={first.count} busy={pending.isFetchingNextPage} onMore={() => void pending.fetchNextPage()} />
        </>
      ) : null}
    </Panel>
  );
}
