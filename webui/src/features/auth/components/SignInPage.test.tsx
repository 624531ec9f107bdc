import { screen } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { mockApi } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { SignInPage } from './SignInPage';

const ownAppliance = { member_of: null, node: null, read_only: null, primary: null };

describe('SignInPage', () => {
  beforeEach(() => {
    mockApi('GET', '/api/v1/auth/me/', { status: 401, body: { detail: 'Authentication credentials were not provided.' } });
  });

  it('names the console of the cluster this appliance joined', async () => {
    mockApi('GET', '/api/v1/cluster/', {
      status: 200,
      body: { member_of: 'https://10.0.2.15/', node: 'lb2', read_only: null, primary: 'https://10.0.2.15/' },
    });
    renderWithProviders(<SignInPage />);
    const note = await screen.findByText(/joined a cluster/);
    expect(note).toHaveTextContent('This appliance (node lb2) joined a cluster, which is managed from its console');
    expect(screen.getByRole('link', { name: 'https://10.0.2.15/' })).toHaveAttribute('href', 'https://10.0.2.15/');
    expect(screen.queryByText('This appliance is read-only')).not.toBeInTheDocument();
  });

  it('says nothing of a cluster on its own appliance', async () => {
    mockApi('GET', '/api/v1/cluster/', { status: 200, body: ownAppliance });
    renderWithProviders(<SignInPage />);
    expect(await screen.findByRole('button', { name: 'Sign in' })).toBeInTheDocument();
    expect(screen.queryByText(/joined a cluster/)).not.toBeInTheDocument();
    expect(screen.queryByText('This appliance is read-only')).not.toBeInTheDocument();
  });

  it('sends a standby to the primary, once', async () => {
    mockApi('GET', '/api/v1/cluster/', {
      status: 200,
      body: { member_of: 'https://10.0.2.10/', node: 'lb2', read_only: 'standby', primary: 'https://10.0.2.10/' },
    });
    renderWithProviders(<SignInPage />);
    // One notice (the read-only one) and one link: the cluster's console is the primary's.
    await screen.findByText('This appliance is read-only');
    const banner = screen.getByRole('status');
    expect(banner).toHaveTextContent('This appliance (node lb2) is a standby of the cluster');
    expect(banner).toHaveTextContent('Sign in and make changes on the primary: https://10.0.2.10/.');
    expect(screen.getByRole('link', { name: 'https://10.0.2.10/' })).toHaveAttribute('href', 'https://10.0.2.10/');
    expect(screen.queryByText(/joined a cluster/)).not.toBeInTheDocument();
  });

  it('sends a fenced primary to the one holding the management address', async () => {
    mockApi('GET', '/api/v1/cluster/', { status: 200, body: { ...ownAppliance, read_only: 'fenced', primary: 'https://10.0.2.100/' } });
    renderWithProviders(<SignInPage />);
    await screen.findByText('This appliance is read-only');
    const banner = screen.getByRole('status');
    expect(banner).toHaveTextContent('This appliance is fenced: it does not hold the cluster’s management address');
    expect(screen.getByRole('link', { name: 'https://10.0.2.100/' })).toHaveAttribute('href', 'https://10.0.2.100/');
  });

  it('says where changes are made even when the primary is not known', async () => {
    mockApi('GET', '/api/v1/cluster/', { status: 200, body: { ...ownAppliance, read_only: 'fenced' } });
    renderWithProviders(<SignInPage />);
    await screen.findByText('This appliance is read-only');
    const banner = screen.getByRole('status');
    expect(banner).toHaveTextContent('Sign in and make changes on the primary, which holds the management address.');
    expect(screen.queryByRole('link')).not.toBeInTheDocument();
  });
});
