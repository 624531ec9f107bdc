import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Role } from '@/features/auth';
import { queryKeys } from '@/lib/queryKeys';
import { mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { NewPoolPage } from './NewPoolPage';

function renderPage(role: Role) {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: role, is_superuser: false, role } });
  mockApi('GET', '/api/v1/certificates/', { status: 200, body: page([]) });
  return renderWithProviders(<NewPoolPage />);
}

describe('NewPoolPage', () => {
  it('gives an admin the pool form', async () => {
    renderPage('admin');
    expect(await screen.findByRole('button', { name: 'Create pool' })).toBeInTheDocument();
  });

  it.each(['viewer', 'operator'] as const)('tells a %s that creating pools needs the admin role', async (role) => {
    const { queryClient } = renderPage(role);
    await waitFor(() => expect(queryClient.getQueryData(queryKeys.me)).toMatchObject({ role }));
    expect(await screen.findByText('Creating pools needs the admin role')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Create pool' })).not.toBeInTheDocument();
  });
});
