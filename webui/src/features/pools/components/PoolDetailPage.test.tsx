import { screen, within } from '@testing-library/react';
import { Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { Pool } from '../types';
import { PoolDetailPage } from './PoolDetailPage';

const pool: Pool = {
  id: 3,
  name: 'l4',
  algorithm: 'shortest-expected-delay',
  health_check: null,
  members: [{ id: 11, pool: 3, name: 'rs1', address: '10.0.2.1', port: 80, weight: 1, state: 'enabled', forwarding: 'tunnel', live: [] }],
};
const service = (id: number, name: string, forwarding: 'proxy' | 'nat', defaultPool = 3) => ({
  id, name, vip: '10.0.0.1', port: 80 + id, protocol: 'tcp', forwarding, default_pool: defaultPool, warnings: [],
});

function renderPage(role: 'admin' | 'operator' | 'viewer' = 'admin') {
  mockApi('GET', '/api/v1/pools/3/', { status: 200, body: pool });
  mockApi('GET', '/api/v1/certificates/', { status: 200, body: page([]) });
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: 'admin', is_superuser: false, role } });
  mockApi('GET', '/api/v1/health/', { status: 200, body: page([]) });
  mockApi('GET', '/api/v1/metrics/members/', { status: 200, body: { step_s: 60, start: '2026-11-22T07:58:00Z', end: '2026-11-22T08:00:00Z', series: [] } });
  return renderWithProviders(
    <Routes>
      <Route path="/pools/:id" element={<PoolDetailPage />} />
    </Routes>,
    { path: '/pools/3' },
  );
}

describe('PoolDetailPage', () => {
  it('tells the layer from the services using the pool, and fits its forms to it', async () => {
    mockApi('GET', '/api/v1/virtual-services/', { status: 200, body: page([service(1, 'nat', 'nat'), service(2, 'other', 'proxy', 9)]) });
    renderPage();
    expect(await screen.findByText(/Layer 4 \(IPVS\): its services forward by NAT/)).toHaveTextContent('Used by nat.');
    expect(screen.getByRole('link', { name: 'nat' })).toHaveAttribute('href', '/services/1');
    expect(within(screen.getByRole('table', { name: 'Members of l4' })).getByRole('rowheader', { name: /rs1/ })).toHaveTextContent('forwarded by tunnel');

    const members = screen.getByRole('region', { name: 'Members' });
    expect(await within(members).findByRole('spinbutton', { name: 'Min connections' })).toBeInTheDocument();
    expect(within(members).queryByRole('spinbutton', { name: 'Max queue' })).not.toBeInTheDocument();
    const settings = screen.getByRole('region', { name: 'Settings' });
    expect(await within(settings).findByRole('combobox', { name: 'Algorithm' })).toHaveValue('shortest-expected-delay');
    expect(within(settings).queryByRole('group', { name: 'Connections to members' })).not.toBeInTheDocument();
  });

  it('offers every setting, marked by layer, when the services cannot be read', async () => {
    mockApi('GET', '/api/v1/virtual-services/', { status: 500, body: { detail: 'boom' } });
    renderPage();
    expect(await screen.findByText(/could not be read: every setting is offered/)).toBeInTheDocument();
    const members = screen.getByRole('region', { name: 'Members' });
    expect(await within(members).findByRole('spinbutton', { name: 'Min connections (layer 4)' })).toBeInTheDocument();
    expect(within(members).getByRole('spinbutton', { name: 'Max queue' })).toBeInTheDocument();
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('shows a viewer the settings as facts, with no way to change or delete them', async () => {
    mockApi('GET', '/api/v1/virtual-services/', { status: 200, body: page([service(1, 'nat', 'nat')]) });
    renderPage('viewer');
    const settings = await screen.findByRole('region', { name: 'Settings' });
    expect(within(settings).getByText('Algorithm').nextSibling).toHaveTextContent('Shortest expected delay');
    expect(within(screen.getByRole('region', { name: 'Health check' })).getByText(/every enabled member is assumed up/)).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Delete pool|Save pool|Add health check/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('combobox')).not.toBeInTheDocument();
  });
});
