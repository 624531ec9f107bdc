import { keepPreviousData, useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { queryKeys } from '@/lib/queryKeys';
import {
  applyRevision,
  confirmRevision,
  findRevisionByNumber,
  getPending,
  getPendingCount,
  getRevision,
  getRevisionDiff,
  listRevisions,
  rollbackToRevision,
} from '../api/revisionsApi';
import { isSettling, type ObjectChange } from '../types';

export const HISTORY_PAGE_SIZE = 10;
/** Changed objects asked for at a time: a configuration of thousands is never read whole. */
export const CHANGES_PAGE_SIZE = 50;
const POLL_MS = 1500;
const PENDING_POLL_MS = 10_000;
const AWAITING_POLL_MS = 5_000;

export function useRevisionHistory(page: number) {
  return useQuery({
    queryKey: [...queryKeys.revisions, 'page', page],
    queryFn: () => listRevisions(HISTORY_PAGE_SIZE, page * HISTORY_PAGE_SIZE),
    placeholderData: keepPreviousData,
    // Keep node results fresh while any listed revision is still settling or awaits confirmation.
    refetchInterval: (query) => {
      const results = query.state.data?.results ?? [];
      return results.some((r) => isSettling(r) || r.confirm_state === 'awaiting') ? POLL_MS * 2 : false;
    },
  });
}

/** One revision, polled until every node has applied it or failed, and while it awaits confirmation. */
export function useRevisionProgress(id: number | undefined) {
  const queryClient = useQueryClient();
  return useQuery({
    queryKey: queryKeys.revision(id ?? 0),
    queryFn: async () => {
      const revision = await getRevision(id!);
      if (!isSettling(revision)) await queryClient.invalidateQueries({ queryKey: [...queryKeys.revisions, 'page'] });
      return revision;
    },
    enabled: id !== undefined,
    refetchInterval: (query) => {
      const revision = query.state.data;
      if (!revision || isSettling(revision)) return POLL_MS;
      return revision.confirm_state === 'awaiting' ? AWAITING_POLL_MS : false;
    },
  });
}

/** The id of the revision numbered `number` (null: none); only asked when the caller does not know it. */
export function useRevisionByNumber(number: number | null | undefined, enabled = true) {
  return useQuery({
    queryKey: [...queryKeys.revisions, 'number', number ?? 0],
    queryFn: () => findRevisionByNumber(number!),
    enabled: enabled && number !== null && number !== undefined,
    staleTime: Infinity, // a number never moves to another revision
  });
}

/**
 * The newest revision: at most one revision awaits confirmation, and any later apply or
 * rollback settles it, so only the newest can be awaiting. Polled while it awaits.
 */
export function useNewestRevision() {
  return useQuery({
    queryKey: [...queryKeys.revisions, 'newest'],
    queryFn: async () => (await listRevisions(1, 0)).results[0] ?? null,
    refetchInterval: (query) => (query.state.data?.confirm_state === 'awaiting' ? AWAITING_POLL_MS : false),
  });
}

/** Asks the pending changes again whenever a change anywhere in the console has finished (any mutation may have edited an object). */
function useRefreshPendingOnChange() {
  const queryClient = useQueryClient();
  useEffect(
    () =>
      queryClient.getMutationCache().subscribe((event) => {
        if (event.type === 'updated' && event.action.type === 'success') {
          void queryClient.invalidateQueries({ queryKey: queryKeys.revisionsPending }, { cancelRefetch: false });
        }
      }),
    [queryClient],
  );
}

/**
 * The first `limit` objects an apply would change, all of them counted (only while `enabled`).
 * Polled; asked again after any change by usePendingCount's subscription, which goes with it.
 */
export function usePendingHead(limit: number, enabled = true) {
  return useQuery({
    queryKey: [...queryKeys.revisionsPending, 'head', limit],
    queryFn: () => getPending(limit),
    refetchInterval: PENDING_POLL_MS,
    enabled,
  });
}

type Counted = { count: number; objects: ObjectChange[] };

/** The next page's offset: the objects read so far, until they are all read. */
function nextOffset(last: Counted, pages: Counted[]): number | undefined {
  const read = pages.reduce((sum, page) => sum + page.objects.length, 0);
  return read < last.count && last.objects.length > 0 ? read : undefined;
}

/** The objects of pages read one after another, each once (an edit between two reads may shift them). */
export function objectsOf(pages: readonly Counted[]): ObjectChange[] {
  const seen = new Set<string>();
  return pages.flatMap((page) => page.objects).filter((object) => !seen.has(object.path) && Boolean(seen.add(object.path)));
}

/** What an apply would change, a page at a time (fetchNextPage for more). Polled, and asked again after any change. */
export function usePendingPages() {
  useRefreshPendingOnChange();
  return useInfiniteQuery({
    queryKey: [...queryKeys.revisionsPending, 'pages'],
    queryFn: ({ pageParam }) => getPending(CHANGES_PAGE_SIZE, pageParam),
    initialPageParam: 0,
    getNextPageParam: nextOffset,
    refetchInterval: PENDING_POLL_MS,
  });
}

/** How many objects an apply would change, without them: the banner's poll. */
export function usePendingCount() {
  useRefreshPendingOnChange();
  return useQuery({ queryKey: [...queryKeys.revisionsPending, 'count'], queryFn: getPendingCount, refetchInterval: PENDING_POLL_MS });
}

/** What revision `id` changed, a page of objects at a time; each node's files come with the first. */
export function useRevisionDiff(id: number, from: number | undefined) {
  return useInfiniteQuery({
    queryKey: [...queryKeys.revision(id), 'diff', from ?? 'previous'],
    queryFn: ({ pageParam }) => getRevisionDiff(id, from, { limit: CHANGES_PAGE_SIZE, offset: pageParam, files: pageParam === 0 }),
    initialPageParam: 0,
    getNextPageParam: nextOffset,
    staleTime: Infinity, // revisions never change
  });
}

/** Refreshes everything about revisions (history, pending, the newest) after a publish. */
function useRefreshRevisions() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: queryKeys.revisions });
}

export function useApply() {
  const queryClient = useQueryClient();
  const refresh = useRefreshRevisions();
  return useMutation({
    mutationFn: applyRevision,
    onSuccess: (revision) => {
      queryClient.setQueryData(queryKeys.revision(revision.id), revision);
      return refresh();
    },
    // A refusal may mean the pending changes moved meanwhile (someone else applied them).
    onError: () => refresh(),
  });
}

export function useConfirm() {
  const refresh = useRefreshRevisions();
  return useMutation({ mutationFn: confirmRevision, onSettled: refresh });
}

export function useRollback() {
  const refresh = useRefreshRevisions();
  return useMutation({
    mutationFn: ({ id, message }: { id: number; message?: string }) => rollbackToRevision(id, message),
    onSettled: refresh,
  });
}
