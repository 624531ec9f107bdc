import type { QueryClient } from '@tanstack/react-query';
import { waitFor } from '@testing-library/react';
import { expect } from 'vitest';
import type { Role } from '@/features/auth';
import { queryKeys } from '@/lib/queryKeys';
import { mockApi } from './mockApi';

/** Answers GET /auth/me/ with a signed-in person of `role` (named after it unless told). */
export function signedInAs(role: Role, username: string = role): void {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username, is_superuser: false, role } });
}

/**
 * Waits until the signed-in person is known, so a test that finds a control missing knows it
 * was hidden for the role, not because the session had not loaded yet.
 */
export async function sessionLoaded(queryClient: QueryClient): Promise<void> {
  await waitFor(() => expect(queryClient.getQueryState(queryKeys.me)?.status).toBe('success'));
}
