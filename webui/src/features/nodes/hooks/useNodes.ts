import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import { createNode, deleteNode, getIpvsSync, listNodes, saveIpvsSync } from '../api/nodesApi';

/** Nodes, refreshed now and then so "last seen" and their status reports stay current. */
export function useNodes() {
  return useQuery({ queryKey: queryKeys.nodes, queryFn: listNodes, refetchInterval: 10_000 });
}

export function useCreateNode() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: createNode, onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.nodes }) });
}

export function useDeleteNode() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: deleteNode, onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.nodes }) });
}

export function useIpvsSync() {
  return useQuery({ queryKey: queryKeys.ipvsSync, queryFn: getIpvsSync });
}

export function useSaveIpvsSync() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: saveIpvsSync, onSuccess: (saved) => queryClient.setQueryData(queryKeys.ipvsSync, saved) });
}
