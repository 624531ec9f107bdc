import { screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Overview, ServiceOverview } from '@/features/telemetry';
import { apiCalls, mockApi } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { DashboardPage } from './DashboardPage';

// The graphs' canvas is uPlot's business (tested with the chart); here only their text counts.
vi.mock('uplot', () => ({ default: class { setData() {} setSize() {} destroy() {} } }));

const service = (id: number, name: string, extra: Partial<ServiceOverview> = {}): ServiceOverview => ({
  id,
  name,
  vip: `10.0.0.${id}`,
  port: 80,
  port_end: 0,
  protocol: 'http',
  forwarding: 'proxy',
  layer: 'l7',
  enabled: true,
  state: 'up',
  members_up: 2,
  members_total: 2,
  connections: 4,
  requests_per_s: 12.5,
  errors_per_s: 0,
  bytes_in_per_s: 2048,
  bytes_out_per_s: 8192,
  ...extra,
});

const overview: Overview = {
  services: [
    service(1, 'web'),
    service(2, 'api', { state: 'degraded', members_up: 1, members_total: 3 }),
    service(3, 'mail', { state: 'down', protocol: 'tcp', members_up: 0, members_total: 2, requests_per_s: 0 }),
  ],
  nodes: [
    { id: 1, name: 'lb1', state: 'online', running_revision: 7, last_seen: '2024-05-01T10:00:00Z', ha: [{ group: 'g1', state: 'master' }] },
    { id: 2, name: 'lb2', state: 'online', running_revision: 6, last_seen: '2024-05-01T10:00:00Z', ha: [{ group: 'g1', state: 'backup' }] },
  ],
  pending_changes: 3,
  revision: { number: 7, live: true, confirm_state: 'confirmed', confirm_by: null },
};

function metricsFor(request: Request) {
  const id = Number(new URL(request.url).searchParams.get('service'));
  const points = [0, 1, 2].map((i) => ({
    t: new Date(Date.parse('2024-05-01T09:58:00Z') + i * 60_000).toISOString(),
    connections: 4,
    requests_per_s: 10 + i,
    errors_per_s: 0,
    bytes_in_per_s: 2048,
    bytes_out_per_s: 8192,
  }));
  return { status: 200, body: { step_s: 60, start: '2024-05-01T09:58:00Z', end: '2024-05-01T10:00:00Z', series: [{ id, name: `s${id}`, points }] } };
}

function setUp(body: Overview = overview, role = 'admin') {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: role, is_superuser: false, role } });
  mockApi('GET', '/api/v1/overview/', { status: 200, body });
  mockApi('GET', '/api/v1/metrics/services/', metricsFor);
  return renderWithProviders(<DashboardPage />);
}

describe('DashboardPage', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('shows each virtual service with its state in words, members and figures', async () => {
    setUp();
    const tiles = await screen.findByRole('list', { name: 'Virtual services' });
    const api = within(tiles).getByRole('article', { name: 'api' });
    expect(within(api).getByText('degraded')).toHaveClass('badge-warning');
    expect(within(api).getByText('members up 1/3')).toBeInTheDocument();
    expect(within(api).getByRole('link', { name: 'api' })).toHaveAttribute('href', '/services/2');
    const web = within(tiles).getByRole('article', { name: 'web' });
    expect(within(web).getByText('12.5')).toBeInTheDocument();
    expect(within(web).getByText('2.0kB/s / 8.2kB/s')).toBeInTheDocument();
    const mail = within(tiles).getByRole('article', { name: 'mail' });
    expect(within(mail).getByText('down')).toBeInTheDocument();
    expect(within(within(mail).getByText('Requests/s').parentElement!).getByText('0')).toBeInTheDocument();
  });

  it('draws the last hour of each figure, with the figures in words for screen readers', async () => {
    setUp();
    const graph = await screen.findByRole('figure', { name: /^Requests\/s of web, last hour/ });
    expect(graph).toHaveAccessibleName(expect.stringContaining('now 12, peak 12, average 11'));
    expect(apiCalls.filter((c) => c.path === '/api/v1/metrics/services/').length).toBeGreaterThanOrEqual(3);
  });

  it('links the pending changes to the revisions and shows the nodes with their HA roles', async () => {
    setUp();
    expect(await screen.findByRole('link', { name: '3 pending changes to apply' })).toHaveAttribute('href', '/revisions');
    const nodes = screen.getByRole('table', { name: 'Nodes' });
    const lb2 = within(nodes).getByRole('row', { name: /lb2/ });
    expect(within(lb2).getByText('backup')).toBeInTheDocument();
    expect(within(lb2).getByText('live is #7: not applied here yet')).toBeInTheDocument();
    expect(within(within(nodes).getByRole('row', { name: /lb1/ })).getByText('master')).toBeInTheDocument();
  });

  it('filters the services by name, address or state', async () => {
    const { user } = setUp();
    const filter = await screen.findByRole('searchbox', { name: 'Filter services' });
    await user.type(filter, 'down');
    expect(await screen.findByText('1 of 3 virtual services match.')).toBeInTheDocument();
    expect(screen.getAllByRole('article').map((a) => a.getAttribute('aria-labelledby'))).toEqual(['service-tile-3']);
    await user.clear(filter);
    await user.type(filter, '10.0.0.2');
    expect(await screen.findByRole('article', { name: 'api' })).toBeInTheDocument();
    expect(screen.getAllByRole('article')).toHaveLength(1);
    await user.clear(filter);
    await user.type(filter, 'nothing-like-this');
    expect(await screen.findByText('No virtual service matches')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Clear the filter' }));
    expect(await screen.findAllByRole('article')).toHaveLength(3);
  });

  it('warns of a revision waiting for confirmation', async () => {
    setUp({ ...overview, revision: { number: 8, live: true, confirm_state: 'awaiting', confirm_by: '2026-11-22T08:05:00Z' } });
    const alert = await screen.findByText('Revision #8 waits for confirmation');
    expect(alert.closest('.alert')).toHaveTextContent(/rolls back by itself at .* unless confirmed/);
    expect(within(alert.closest('.alert') as HTMLElement).getByRole('link', { name: 'revisions page' })).toHaveAttribute('href', '/revisions');
  });

  it('says when nothing is pending', async () => {
    setUp({ ...overview, pending_changes: 0 });
    expect(await screen.findByText('No pending changes.')).toBeInTheDocument();
    expect(screen.getByText(/latest revision #7, live/)).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: /pending/ })).not.toBeInTheDocument();
  });

  it('leads an admin to the wizard when there is no service yet', async () => {
    setUp({ ...overview, services: [] });
    expect(await screen.findByText('No virtual services yet')).toBeInTheDocument();
    expect(await screen.findByRole('link', { name: 'Create a virtual service' })).toHaveAttribute('href', '/services/new');
  });

  it('offers a viewer no wizard', async () => {
    setUp({ ...overview, services: [] }, 'viewer');
    expect(await screen.findByText(/An administrator creates them/)).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Create a virtual service' })).not.toBeInTheDocument();
  });

  it('shows the error and retries', async () => {
    mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: 'a', is_superuser: false, role: 'admin' } });
    mockApi('GET', '/api/v1/overview/', { status: 503, body: { detail: 'The database is not reachable.' } });
    const { user } = renderWithProviders(<DashboardPage />);
    expect(await screen.findByRole('alert')).toHaveTextContent('The database is not reachable.');
    mockApi('GET', '/api/v1/overview/', { status: 200, body: overview });
    mockApi('GET', '/api/v1/metrics/services/', metricsFor);
    await user.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('article', { name: 'web' })).toBeInTheDocument();
  });

  it('draws a page of tiles at a time when there are a thousand services, graphs only on screen', async () => {
    // Tiles off screen never intersect: their history is not read.
    vi.stubGlobal('IntersectionObserver', class { observe() {} disconnect() {} });
    const many = Array.from({ length: 1000 }, (_, i) => service(i + 1, `svc-${String(i + 1).padStart(4, '0')}`));
    const { user } = setUp({ ...overview, services: many });
    expect(await screen.findByText('1000 virtual services.')).toBeInTheDocument();
    expect(screen.getAllByRole('article')).toHaveLength(48);
    await user.click(screen.getByRole('button', { name: 'Show 48 more' }));
    expect(screen.getAllByRole('article')).toHaveLength(96);
    await user.type(screen.getByRole('searchbox', { name: 'Filter services' }), 'svc-0999');
    expect(await screen.findByText('1 of 1000 virtual services match.')).toBeInTheDocument();
    expect(apiCalls.filter((c) => c.path === '/api/v1/metrics/services/')).toHaveLength(0);
  }, 20_000);
});
