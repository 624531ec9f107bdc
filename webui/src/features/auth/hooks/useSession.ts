import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import { fetchCurrentUser, fetchMembership, signIn, signOut } from '../api/authApi';

/** The cluster this appliance joined, if any: it does not change while the console is open. */
export function useMembership() {
  return useQuery({ queryKey: queryKeys.membership, queryFn: fetchMembership, staleTime: Infinity, retry: false });
}

export function useCurrentUser() {
  return useQuery({ queryKey: queryKeys.me, queryFn: fetchCurrentUser, staleTime: 60_000, retry: false });
}

export function useSignIn() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: signIn,
    onSuccess: (user) => {
      queryClient.clear();
      queryClient.setQueryData(queryKeys.me, user);
    },
  });
}

export function useSignOut() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: signOut,
    onSettled: () => {
      queryClient.clear();
      queryClient.setQueryData(queryKeys.me, null);
    },
  });
}
