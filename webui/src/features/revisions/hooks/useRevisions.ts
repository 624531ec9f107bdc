import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import { applyRevision, getRevision, listRevisions } from '../api/revisionsApi';
import { isSettling } from '../types';

export const HISTORY_PAGE_SIZE = 10;
const POLL_MS = 1500;

export function useRevisionHistory(page: number) {
  return useQuery({
    queryKey: [...queryKeys.revisions, 'page', page],
    queryFn: () => listRevisions(HISTORY_PAGE_SIZE, page * HISTORY_PAGE_SIZE),
    placeholderData: keepPreviousData,
    // Keep node results fresh while any listed revision is still settling.
    refetchInterval: (query) => (query.state.data?.results.some(isSettling) ? POLL_MS * 2 : false),
  });
}

/** One revision, polled until every node has applied it or failed. */
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
    refetchInterval: (query) => (query.state.data && !isSettling(query.state.data) ? false : POLL_MS),
  });
}

export function useApply() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: applyRevision,
    onSuccess: (revision) => {
      queryClient.setQueryData(queryKeys.revision(revision.id), revision);
      return queryClient.invalidateQueries({ queryKey: [...queryKeys.revisions, 'page'] });
    },
  });
}
