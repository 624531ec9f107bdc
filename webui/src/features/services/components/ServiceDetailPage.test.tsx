import { screen, within } from '@testing-library/react';
import { Route, Routes } from 'react-router-dom';
import { describe, expect, it, vi } from 'vitest';
import { mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { ServiceDetailPage } from './ServiceDetailPage';

vi.mock('uplot', () => ({ default: class { setData() {} setSize() {} destroy() {} } }));

const service = {
  id: 5,
  name: 'shop',
  vip: '10.0.0.5',
  port: 443,
  port_end: 0,
  forwarding: 'proxy',
  protocol: 'https',
  default_pool: 3,
  enabled: true,
  warnings: [],
};

const rules = [
  { id: 1, virtual_service: 5, name: 'api', position: 0, enabled: true, conditions: [{ kind: 'path_prefix', values: ['/api'], negate: false }], action: 'use_pool', pool: 4 },
  { id: 2, virtual_service: 5, name: 'old', position: 1, enabled: false, conditions: [{ kind: 'path_prefix', values: ['/old'], negate: false }], action: 'deny', deny_status: 410 },
];

const overviewEntry = {
  id: 5, name: 'shop', vip: '10.0.0.5', port: 443, port_end: 0, protocol: 'https', forwarding: 'proxy', layer: 'l7', enabled: true,
  state: 'degraded', members_up: 3, members_total: 4, connections: 9, requests_per_s: 20, errors_per_s: 1, bytes_in_per_s: 10, bytes_out_per_s: 20,
};

const metrics = {
  step_s: 60,
  start: '2026-11-22T07:58:00Z',
  end: '2026-11-22T08:00:00Z',
  series: [{ id: 5, name: 'shop', points: [{ t: '2026-11-22T07:59:00Z', connections: 9, requests_per_s: 20, errors_per_s: 1, bytes_in_per_s: 10, bytes_out_per_s: 20 }] }],
};

type Answer = { status: number; body: unknown };

function renderPage(role = 'admin', serviceAnswer: Answer = { status: 200, body: service }) {
  const renderPool = (id: number) => <p>members of pool {id}</p>;
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: role, is_superuser: false, role } });
  mockApi('GET', '/api/v1/virtual-services/5/', serviceAnswer);
  mockApi('GET', '/api/v1/pools/', { status: 200, body: page([{ id: 3, name: 'web', members: [] }, { id: 4, name: 'api-pool', members: [] }]) });
  mockApi('GET', '/api/v1/rules/', { status: 200, body: page(rules) });
  mockApi('GET', '/api/v1/overview/', { status: 200, body: { services: [overviewEntry], nodes: [], pending_changes: 0, revision: null } });
  mockApi('GET', '/api/v1/metrics/services/', { status: 200, body: metrics });
  return renderWithProviders(
    <Routes>
      <Route path="/services/:id" element={<ServiceDetailPage renderPool={renderPool} />} />
    </Routes>,
    { path: '/services/5' },
  );
}

describe('ServiceDetailPage', () => {
  it('shows the state, the listener, and links to the edit page and the pool', async () => {
    renderPage();
    expect(await screen.findByRole('heading', { level: 1, name: 'Virtual service shop' })).toBeInTheDocument();
    expect(await screen.findByText('degraded')).toHaveClass('badge-warning');
    expect(screen.getByText('members up 3/4')).toBeInTheDocument();
    expect(screen.getByText('10.0.0.5:443')).toBeInTheDocument();
    expect(await screen.findByRole('link', { name: 'Edit' })).toHaveAttribute('href', '/services/5/edit');
    expect(await screen.findByRole('link', { name: 'web' })).toHaveAttribute('href', '/pools/3');
  });

  it("graphs the service's last hour with its figures in words", async () => {
    renderPage();
    const graphs = await screen.findByRole('region', { name: 'Last hour' });
    expect(await within(graphs).findByRole('figure', { name: /^Requests and errors per second of shop/ })).toHaveAccessibleName(
      expect.stringContaining('Requests/s: now 20'),
    );
    expect(within(graphs).getByRole('table', { name: 'Bytes per second in and out of shop' })).toBeInTheDocument();
  });

  it('summarizes the rules read-only, and shows the members of every pool used', async () => {
    renderPage();
    const rulesPanel = await screen.findByRole('region', { name: 'Rules' });
    const items = await within(rulesPanel).findAllByRole('listitem');
    expect(items[0]).toHaveTextContent('api: when path starts with /api, use pool api-pool');
    expect(items[1]).toHaveTextContent('old: when path starts with /old, deny with 410 (off)');
    expect(within(rulesPanel).queryByRole('button')).not.toBeInTheDocument();
    expect(within(rulesPanel).getByRole('link', { name: 'Edit the rules' })).toHaveAttribute('href', '/services/5/edit');
    // The default pool, then the one a rule sends to.
    expect(await screen.findByText('members of pool 4')).toBeInTheDocument();
    expect(screen.getAllByText(/^members of pool/).map((p) => p.textContent)).toEqual(['members of pool 3', 'members of pool 4']);
  });

  it('offers a viewer no edit link', async () => {
    const { queryClient } = renderPage('viewer');
    expect(await screen.findByText('degraded')).toBeInTheDocument();
    await vi.waitFor(() => expect(queryClient.getQueryData(['auth', 'me'])).toMatchObject({ role: 'viewer' }));
    expect(screen.queryByRole('link', { name: 'Edit' })).not.toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Edit the rules' })).not.toBeInTheDocument();
  });

  it('says when the service cannot be read', async () => {
    renderPage('admin', { status: 404, body: { detail: 'No VirtualService matches the given query.' } });
    expect(await screen.findByRole('alert')).toHaveTextContent('No VirtualService matches the given query.');
  });
});
