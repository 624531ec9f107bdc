import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import { createRule, deleteRule, listRules, moveRule, setRuleEnabled, updateRule } from '../api/rulesApi';
import type { RuleRequest } from '../types';

export function useRules(serviceId: number) {
  return useQuery({ queryKey: queryKeys.rules(serviceId), queryFn: () => listRules(serviceId) });
}

/** Any change to one rule can move the others: the whole list is read again. */
function useInvalidateRules(serviceId: number) {
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: queryKeys.rules(serviceId) });
}

/** Creates when `id` is undefined, else replaces the rule's content. */
export function useSaveRule(serviceId: number, id?: number) {
  return useMutation({
    mutationFn: (body: RuleRequest) => (id === undefined ? createRule(body) : updateRule(id, body)),
    onSuccess: useInvalidateRules(serviceId),
  });
}

export function useMoveRule(serviceId: number) {
  return useMutation({
    mutationFn: ({ id, position }: { id: number; position: number }) => moveRule(id, position),
    onSuccess: useInvalidateRules(serviceId),
  });
}

export function useSetRuleEnabled(serviceId: number) {
  return useMutation({
    mutationFn: ({ id, enabled }: { id: number; enabled: boolean }) => setRuleEnabled(id, enabled),
    onSuccess: useInvalidateRules(serviceId),
  });
}

export function useDeleteRule(serviceId: number) {
  return useMutation({ mutationFn: deleteRule, onSuccess: useInvalidateRules(serviceId) });
}
