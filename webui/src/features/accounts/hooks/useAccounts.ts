import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import * as accountsApi from '../api/accountsApi';
import type { UserPatch } from '../types';

export function useUsers(enabled = true) {
  return useQuery({ queryKey: queryKeys.users, queryFn: accountsApi.listUsers, enabled });
}

function useInvalidate(...keys: (readonly unknown[])[]) {
  const queryClient = useQueryClient();
  return () => Promise.all(keys.map((queryKey) => queryClient.invalidateQueries({ queryKey })));
}

export function useCreateUser() {
  return useMutation({ mutationFn: accountsApi.createUser, onSuccess: useInvalidate(queryKeys.users) });
}

export function useUpdateUser(id: number) {
  // A role change may change what the signed-in person may do (their own row): refresh it too.
  return useMutation({
    mutationFn: (body: Omit<UserPatch, 'role'> & Partial<Pick<UserPatch, 'role'>>) => accountsApi.updateUser(id, body),
    onSuccess: useInvalidate(queryKeys.users, queryKeys.me),
  });
}

export function useDeleteUser() {
  return useMutation({ mutationFn: accountsApi.deleteUser, onSuccess: useInvalidate(queryKeys.users, queryKeys.tokens) });
}

export function useTokens() {
  return useQuery({ queryKey: queryKeys.tokens, queryFn: accountsApi.listTokens });
}

export function useCreateToken() {
  return useMutation({ mutationFn: accountsApi.createToken, onSuccess: useInvalidate(queryKeys.tokens) });
}

export function useRevokeToken() {
  return useMutation({ mutationFn: accountsApi.revokeToken, onSuccess: useInvalidate(queryKeys.tokens) });
}

export function useChangePassword() {
  return useMutation({ mutationFn: accountsApi.changePassword, onSuccess: useInvalidate(queryKeys.tokens) });
}
