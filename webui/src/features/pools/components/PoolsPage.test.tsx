import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { queryKeys } from '@/lib/queryKeys';
import { mockApi, mockList } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { Pool } from '../types';
import { PoolsPage } from './PoolsPage';

function member(id: number, pool: number, name: string, address: string) {
  return { id, pool, name, address, port: 80, weight: 1, state: 'enabled' as const, forwarding: 'nat' as const, live: [] };
}

const POOLS: Pool[] = [
  { id: 1, name: 'web', algorithm: 'round-robin', health_check: null, members: [member(1, 1, 's1', '10.0.2.1'), member(2, 1, 's2', '10.0.2.2')] },
  { id: 2, name: 'api', algorithm: 'least-connections', health_check: null, members: [member(3, 2, 'a1', '10.0.3.1')] },
  { id: 3, name: 'empty', algorithm: 'source-hash', health_check: null, members: [] },
];

function renderList(role: 'admin' | 'viewer' = 'admin', path = '/pools', answer?: (query: URLSearchParams) => Pool[]) {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: role, is_superuser: false, role } });
  const queries = mockList('/api/v1/pools/', POOLS, answer);
  return { ...renderWithProviders(<PoolsPage />, { path }), last: () => Object.fromEntries(queries.at(-1)!) };
}

const table = () => screen.getByRole('table', { name: 'Pools' });
const poolNames = () => within(table()).getAllByRole('rowheader').map((cell) => within(cell).getByRole('link').textContent);
const named = (...names: string[]) => names.map((name) => POOLS.find((p) => p.name === name)!);

describe('PoolsPage', () => {
  it('asks the API for pools by a member address and announces the count', async () => {
    const { user, last } = renderList('admin', '/pools', (query) => (query.get('search') === '10.0.3.1' ? named('api') : POOLS));
    await user.type(await screen.findByRole('searchbox', { name: 'Filter pools' }), '10.0.3.1');
    await waitFor(() => expect(poolNames()).toEqual(['api']));
    expect(last()).toEqual({ limit: '100', offset: '0', ordering: 'name', search: '10.0.3.1' });
    expect(screen.getByRole('status')).toHaveTextContent('1 of 3 pools');
  });

  it('restores ?q= on load', async () => {
    const { last } = renderList('admin', '/pools?q=10.0.', () => named('api', 'web'));
    expect(await screen.findByRole('searchbox', { name: 'Filter pools' })).toHaveValue('10.0.');
    await screen.findByRole('table', { name: 'Pools' });
    expect(last().search).toBe('10.0.');
    expect(poolNames()).toEqual(['api', 'web']);
    expect(await screen.findByText('2 of 3 pools')).toBeInTheDocument();
  });

  it('sorts by member count on the API, both ways, ties by name', async () => {
    const { user, last } = renderList();
    await screen.findByRole('table', { name: 'Pools' });
    const members = within(table()).getByRole('columnheader', { name: 'Members' });
    await user.click(within(members).getByRole('button'));
    expect(members).toHaveAttribute('aria-sort', 'ascending');
    await waitFor(() => expect(last().ordering).toBe('members,name'));
    await user.click(within(members).getByRole('button'));
    expect(members).toHaveAttribute('aria-sort', 'descending');
    await waitFor(() => expect(last().ordering).toBe('-members,name'));
  });

  it('offers New pool to an admin only', async () => {
    const admin = renderList('admin');
    expect(await screen.findByRole('link', { name: 'New pool' })).toHaveAttribute('href', '/pools/new');
    admin.unmount();

    const { queryClient } = renderList('viewer');
    await screen.findByRole('table', { name: 'Pools' });
    await waitFor(() => expect(queryClient.getQueryData(queryKeys.me)).toMatchObject({ role: 'viewer' }));
    expect(screen.queryByRole('link', { name: 'New pool' })).not.toBeInTheDocument();
  });
});
