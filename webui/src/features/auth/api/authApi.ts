import { ApiError, api, unwrap } from '@/lib/api';
import type { LoginRequest, Membership, User } from '../types';

/** The signed-in user, or null when there is no session (the API answers 401/403). */
export async function fetchCurrentUser(): Promise<User | null> {
  try {
    return await unwrap(api.GET('/api/v1/auth/me/'));
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return null;
    throw err;
  }
}

export function signIn(credentials: LoginRequest): Promise<User> {
  return unwrap(api.POST('/api/v1/auth/login/', { body: credentials }));
}

export async function signOut(): Promise<void> {
  await unwrap(api.POST('/api/v1/auth/logout/'));
}

/** Whether this appliance joined another's cluster, whether it takes changes, and where they are made (no sign-in needed). */
export function fetchMembership(): Promise<Membership> {
  return unwrap(api.GET('/api/v1/cluster/'));
}
