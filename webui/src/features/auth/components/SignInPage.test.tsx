import { screen } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { mockApi } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { SignInPage } from './SignInPage';

describe('SignInPage', () => {
  beforeEach(() => {
    mockApi('GET', '/api/v1/auth/me/', { status: 401, body: { detail: 'Authentication credentials were not provided.' } });
  });

  it('names the console of the cluster this appliance joined', async () => {
    mockApi('GET', '/api/v1/cluster/', { status: 200, body: { member_of: 'https://10.0.2.15/', node: 'lb2' } });
    renderWithProviders(<SignInPage />);
    const note = await screen.findByText(/joined a cluster/);
    expect(note).toHaveTextContent('This appliance (node lb2) joined a cluster, which is managed from its console');
    expect(screen.getByRole('link', { name: 'https://10.0.2.15/' })).toHaveAttribute('href', 'https://10.0.2.15/');
  });

  it('says nothing of a cluster on its own appliance', async () => {
    mockApi('GET', '/api/v1/cluster/', { status: 200, body: { member_of: null, node: null } });
    renderWithProviders(<SignInPage />);
    expect(await screen.findByRole('button', { name: 'Sign in' })).toBeInTheDocument();
    expect(screen.queryByText(/joined a cluster/)).not.toBeInTheDocument();
  });
});
