import { api, listAll, unwrap } from '@/lib/api';
import type { ApiToken, ApiTokenCreated, ApiTokenRequest, PasswordChangeRequest, User, UserPatch, UserRequest } from '../types';

// --- people (admins only) ---

export function listUsers(): Promise<User[]> {
  return listAll((limit, offset) => unwrap(api.GET('/api/v1/users/', { params: { query: { limit, offset } } })));
}

export function createUser(body: UserRequest): Promise<User> {
  return unwrap(api.POST('/api/v1/users/', { body }));
}

/**
 * Changes some of a person's fields. `version` is the one read: a change made meanwhile by
 * someone else answers 409. The last active admin cannot be demoted or deactivated (400).
 */
export function updateUser(id: number, body: Omit<UserPatch, 'role'> & Partial<Pick<UserPatch, 'role'>>): Promise<User> {
  // The generated type marks role required (the field has a default); a PATCH leaves it out.
  return unwrap(api.PATCH('/api/v1/users/{id}/', { params: { path: { id } }, body: body as UserPatch }));
}

/** Refused (400, `{detail}`) for yourself and for the last active admin. */
export async function deleteUser(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/users/{id}/', { params: { path: { id } } }));
}

// --- API tokens (your own; an admin sees everyone's) ---

export function listTokens(): Promise<ApiToken[]> {
  return listAll((limit, offset) => unwrap(api.GET('/api/v1/tokens/', { params: { query: { limit, offset } } })));
}

/** The answer carries the secret: the only time the API shows it. */
export function createToken(body: ApiTokenRequest): Promise<ApiTokenCreated> {
  return unwrap(api.POST('/api/v1/tokens/', { body }));
}

/** Revokes the token at once; it stays listed as revoked. */
export async function revokeToken(id: number): Promise<void> {
  await unwrap(api.DELETE('/api/v1/tokens/{id}/', { params: { path: { id } } }));
}

// --- your own password ---

/** Your other console sessions end; this one goes on. */
export async function changePassword(body: PasswordChangeRequest): Promise<void> {
  await unwrap(api.POST('/api/v1/auth/password/', { body }));
}
