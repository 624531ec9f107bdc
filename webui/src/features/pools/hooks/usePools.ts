import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ServerListSpec, useServerList } from '@/lib/listView';
import { queryKeys } from '@/lib/queryKeys';
import * as poolsApi from '../api/poolsApi';
import type { HealthCheckRequest, MemberRequest, MemberRuntimeChange, PoolRequest } from '../types';

/** The pools list: a page of them, searched and sorted by the API (`useServerList`). */
export function usePoolList<K extends string>(spec: ServerListSpec<K>) {
  return useServerList(spec, queryKeys.pools, poolsApi.listPoolPage, poolsApi.countPools);
}

export function useCertificateChoices() {
  return useQuery({ queryKey: [...queryKeys.certificates, 'choices', 'pools'], queryFn: poolsApi.listCertificateChoices });
}

export function usePool(id: number) {
  return useQuery({ queryKey: queryKeys.pool(id), queryFn: () => poolsApi.getPool(id) });
}

/**
 * The services using the pool, for its layer. Under the services' key, so changing a
 * service's forwarding refreshes it; not retried: without it the forms offer every layer.
 */
export function usePoolServices(id: number) {
  return useQuery({ queryKey: [...queryKeys.services, 'by-pool', id], queryFn: () => poolsApi.listPoolServices(id), retry: false });
}

/** Every change to a pool or its parts refreshes all pool queries (lists, details, choices). */
function useInvalidatePools() {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: queryKeys.pools });
}

export function useSavePool(id?: number) {
  const invalidate = useInvalidatePools();
  return useMutation({
    mutationFn: (body: PoolRequest) => (id === undefined ? poolsApi.createPool(body) : poolsApi.updatePool(id, body)),
    onSuccess: invalidate,
  });
}

export function useDeletePool() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: poolsApi.deletePool,
    onSuccess: (_data, id) => {
      queryClient.removeQueries({ queryKey: queryKeys.pool(id) });
      return queryClient.invalidateQueries({ queryKey: queryKeys.pools });
    },
  });
}

export function useSaveMember(id?: number) {
  const invalidate = useInvalidatePools();
  return useMutation({
    mutationFn: (body: MemberRequest) => (id === undefined ? poolsApi.createMember(body) : poolsApi.updateMember(id, body)),
    onSuccess: invalidate,
  });
}

/** A runtime change is published as a revision: the pools, the history and the live health all change. */
export function useChangeMemberAtRuntime() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, change }: { id: number; change: MemberRuntimeChange }) => poolsApi.changeMemberAtRuntime(id, change),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.pools }),
        queryClient.invalidateQueries({ queryKey: queryKeys.revisions }),
        queryClient.invalidateQueries({ queryKey: queryKeys.telemetry }),
      ]),
  });
}

export function useDeleteMember() {
  const invalidate = useInvalidatePools();
  return useMutation({ mutationFn: poolsApi.deleteMember, onSuccess: invalidate });
}

export function useSaveHealthCheck(id?: number) {
  const invalidate = useInvalidatePools();
  return useMutation({
    mutationFn: (body: HealthCheckRequest) =>
      id === undefined ? poolsApi.createHealthCheck(body) : poolsApi.updateHealthCheck(id, body),
    onSuccess: invalidate,
  });
}

export function useDeleteHealthCheck() {
  const invalidate = useInvalidatePools();
  return useMutation({ mutationFn: poolsApi.deleteHealthCheck, onSuccess: invalidate });
}
