import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import * as haApi from '../api/haApi';
import type { HaEventFilters, HaGroupRequest } from '../types';

/** The timeline and the states follow the nodes' agents: refreshed every few seconds. */
export const EVENTS_REFRESH_MS = 3_000;
const STATES_REFRESH_MS = 5_000;

export function useHaGroups() {
  return useQuery({ queryKey: queryKeys.haGroups, queryFn: haApi.listHaGroups });
}

/** Under the nodes' key, so a change on the Nodes page (an address, standby) refreshes it. */
export function useHaNodes() {
  return useQuery({ queryKey: [...queryKeys.nodes, 'ha'], queryFn: haApi.listHaNodes, refetchInterval: STATES_REFRESH_MS });
}

export function useHaEvents(filters: HaEventFilters) {
  return useQuery({
    queryKey: queryKeys.haEvents(filters),
    queryFn: () => haApi.listHaEvents(filters),
    placeholderData: keepPreviousData,
    refetchInterval: EVENTS_REFRESH_MS,
  });
}

export function useSaveHaGroup(id?: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: HaGroupRequest) => (id === undefined ? haApi.createHaGroup(body) : haApi.updateHaGroup(id, body)),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.haGroups }),
  });
}

export function useDeleteHaGroup() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: haApi.deleteHaGroup, onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.haGroups }) });
}
