import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import {
  createJoinCode,
  createNode,
  deleteNode,
  getIpvsSync,
  getNewestRevision,
  getReplication,
  listDaemonEvents,
  listHaGroupChoices,
  listJoinCodes,
  listNodes,
  revokeJoinCode,
  saveIpvsSync,
  setNodeStandby,
  switchOver,
  updateNodeAddress,
} from '../api/nodesApi';

const REFRESH_MS = 10_000;

/** Nodes, refreshed now and then so "last seen" and their status reports stay current. */
export function useNodes() {
  return useQuery({ queryKey: queryKeys.nodes, queryFn: listNodes, refetchInterval: REFRESH_MS });
}

/** The newest daemon restarts, refreshed with the nodes. */
export function useDaemonEvents() {
  return useQuery({ queryKey: queryKeys.daemonEvents, queryFn: listDaemonEvents, refetchInterval: REFRESH_MS });
}

/** The newest revision, refreshed with the nodes, to tell which nodes are behind. */
export function useNewestRevision() {
  return useQuery({ queryKey: [...queryKeys.revisions, 'newest'], queryFn: getNewestRevision, refetchInterval: REFRESH_MS });
}

export function useCreateNode() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: createNode, onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.nodes }) });
}

/** A node's address is part of every HA group it is in: the HA page refreshes too (under the nodes' key). */
export function useSaveNodeAddress(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (address: string | null) => updateNodeAddress(id, address),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.nodes }),
  });
}

/** Standby is published as a revision: the nodes, the newest revision and the history change. */
export function useNodeStandby() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, standby }: { id: number; standby: boolean }) => setNodeStandby(id, standby),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.nodes }),
        queryClient.invalidateQueries({ queryKey: queryKeys.revisions }),
      ]),
  });
}

export function useDeleteNode() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: deleteNode, onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.nodes }) });
}

export function useIpvsSync() {
  return useQuery({ queryKey: queryKeys.ipvsSync, queryFn: getIpvsSync });
}

/** Under the HA groups' key, so a group made or renamed on the HA page is offered here. */
export function useHaGroupChoices() {
  return useQuery({ queryKey: [...queryKeys.haGroups, 'choices'], queryFn: listHaGroupChoices });
}

export function useSaveIpvsSync() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: saveIpvsSync, onSuccess: (saved) => queryClient.setQueryData(queryKeys.ipvsSync, saved) });
}

/** Join codes, refreshed with the nodes: a code turns "used" when its appliance joins. */
export function useJoinCodes(enabled: boolean) {
  return useQuery({ queryKey: queryKeys.joinCodes, queryFn: listJoinCodes, refetchInterval: REFRESH_MS, enabled });
}

export function useCreateJoinCode() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: createJoinCode, onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.joinCodes }) });
}

export function useRevokeJoinCode() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: revokeJoinCode, onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.joinCodes }) });
}

/** The database's replication, refreshed with the nodes: a standby that goes away shows within one refresh. */
export function useReplication() {
  return useQuery({ queryKey: queryKeys.replication, queryFn: getReplication, refetchInterval: REFRESH_MS });
}

/** A switchover: the replication state is read again at once (then the standby becomes the primary). */
export function useSwitchover() {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: switchOver, onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.replication }) });
}
