import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import { fetchCurrentUser, fetchMembership, signIn, signOut } from '../api/authApi';

// Whether this appliance takes changes can change while the console is open (a standby is
// promoted, a primary fenced): asked again every 15 s, and only while the tab is shown.
const MEMBERSHIP_POLL_MS = 15_000;

/** The cluster this appliance joined, if any, whether it takes changes, and where they are made. */
export function useMembership() {
  return useQuery({
    queryKey: queryKeys.membership,
    queryFn: fetchMembership,
    staleTime: MEMBERSHIP_POLL_MS,
    refetchInterval: MEMBERSHIP_POLL_MS,
    retry: false,
  });
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
