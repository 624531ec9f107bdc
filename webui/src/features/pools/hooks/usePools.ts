import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import * as poolsApi from '../api/poolsApi';
import type { HealthCheckRequest, MemberRequest, MemberState, PoolRequest } from '../types';

export function usePools() {
  return useQuery({ queryKey: queryKeys.pools, queryFn: poolsApi.listPools });
}

export function usePool(id: number) {
  return useQuery({ queryKey: queryKeys.pool(id), queryFn: () => poolsApi.getPool(id) });
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

export function useSetMemberState() {
  const invalidate = useInvalidatePools();
  return useMutation({
    mutationFn: ({ id, state }: { id: number; state: MemberState }) => poolsApi.setMemberState(id, state),
    onSuccess: invalidate,
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
