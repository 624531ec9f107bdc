import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import { listAudit } from '../api/auditApi';
import { FOLLOW_MS } from '../types';

/** A page of entries; `follow` re-reads it every few seconds to show new ones. */
export function useAuditPage(query: Record<string, string>, offset: number, follow: boolean) {
  return useQuery({
    queryKey: queryKeys.auditPage(query, offset),
    queryFn: () => listAudit(query, offset),
    placeholderData: keepPreviousData,
    refetchInterval: follow ? FOLLOW_MS : false,
  });
}
