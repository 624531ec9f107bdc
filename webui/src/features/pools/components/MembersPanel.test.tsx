import { screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { HealthEvent, MemberHealth } from '@/features/telemetry';
import { queryKeys } from '@/lib/queryKeys';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { Member, Pool } from '../types';
import { MembersPanel, PoolMembers } from './MembersPanel';

vi.mock('uplot', () => ({ default: class { setData() {} setSize() {} destroy() {} } }));

const s1: Member = { id: 11, pool: 3, name: 's1', address: '10.0.0.11', port: 80, weight: 1, state: 'enabled', live: [] };
const s2: Member = { id: 12, pool: 3, name: 's2', address: '10.0.0.12', port: 80, weight: 5, state: 'drain', live: [] };
const pool: Pool = {
  id: 3,
  name: 'web',
  algorithm: 'round-robin',
  description: '',
  health_check: null,
  members: [
    s1,
    s2,
  ],
};

const health = (member: Member, extra: Partial<MemberHealth>): MemberHealth => ({
  member: member.id,
  member_name: member.name,
  pool: 3,
  pool_name: 'web',
  node: 1,
  node_name: 'lb1',
  status: 'up',
  check: 'L7OK',
  detail: 'HTTP status 200',
  code: 200,
  latency_ms: 2,
  checked_at: '2026-11-22T08:00:00Z',
  since: '2026-11-22T07:00:00Z',
  last_failure: '',
  last_failure_at: null,
  stale: false,
  ...extra,
});

const healthRows: MemberHealth[] = [
  health(s1, { status: 'down', check: 'L7STS', detail: 'HTTP status 503', code: 503, latency_ms: 4 }),
  health(s2, { last_failure: 'L4TOUT: timeout after 1000 ms', last_failure_at: '2026-11-22T06:00:00Z' }),
  health(s2, { node: 2, node_name: 'lb2', stale: true }),
];

const memberMetrics = {
  step_s: 60,
  start: '2026-11-22T07:58:00Z',
  end: '2026-11-22T08:00:00Z',
  series: [
    {
      id: 12,
      name: 's2',
      points: [{ t: '2026-11-22T07:59:00Z', connections: 5, requests_per_s: 3, errors_per_s: 0, bytes_in_per_s: 1500, bytes_out_per_s: 64000 }],
    },
  ],
};

const events: HealthEvent[] = [
  { id: 1, member: 11, member_name: 's1', pool: 3, pool_name: 'web', node: 1, node_name: 'lb1', at: '2026-11-22T07:30:00Z', status: 'down', previous: 'up', check: 'L7STS', detail: 'HTTP status 503', code: 503, latency_ms: 4 },
];

function asRole(role: string) {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: role, is_superuser: false, role } });
}

/** The calls that change something (the live figures are read all along). */
const changes = () => apiCalls.filter((c) => c.method !== 'GET');

beforeEach(() => {
  asRole('admin');
  mockApi('GET', '/api/v1/health/', { status: 200, body: page(healthRows) });
  mockApi('GET', '/api/v1/metrics/members/', { status: 200, body: memberMetrics });
  mockApi('GET', '/api/v1/health-events/', { status: 200, body: page(events) });
});

describe('MembersPanel', () => {
  it('lists members with their state pressed', async () => {
    renderWithProviders(<MembersPanel pool={pool} />);
    const table = screen.getByRole('table', { name: 'Members of web' });
    expect(within(table).getAllByRole('row')).toHaveLength(3);
    const s2 = await within(table).findByRole('group', { name: 'State of s2' });
    expect(within(s2).getByRole('button', { name: 'Drain' })).toHaveAttribute('aria-pressed', 'true');
    expect(within(s2).getByRole('button', { name: 'Enable' })).toHaveAttribute('aria-pressed', 'false');
  });

  it('drains a live member with one click, through the runtime API', async () => {
    mockApi('POST', '/api/v1/members/11/runtime/', { status: 200, body: { member: { ...pool.members[0], state: 'drain' }, revision: 8 } });
    const { user } = renderWithProviders(<MembersPanel pool={pool} />);
    await user.click(within(await screen.findByRole('group', { name: 'State of s1' })).getByRole('button', { name: 'Drain' }));
    expect(apiCalls).toContainEqual({ method: 'POST', path: '/api/v1/members/11/runtime/', body: { state: 'drain' } });
    expect(await screen.findByText('s1 draining (revision 8).')).toBeInTheDocument();
  });

  it('says to apply first when the member is not live yet (409)', async () => {
    mockApi('POST', '/api/v1/members/12/runtime/', {
      status: 409,
      body: {
        detail: 'Not changed.',
        problems: [{ path: 'pools/web/members/s2', message: 'not in the live configuration yet; apply the pending changes first' }],
      },
    });
    const { user } = renderWithProviders(<MembersPanel pool={pool} />);
    await user.click(within(await screen.findByRole('group', { name: 'State of s2' })).getByRole('button', { name: 'Disable' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Not changed: not in the live configuration yet; apply the pending changes first.',
    );
  });

  it('sets a live weight, and refuses one out of range before sending', async () => {
    mockApi('POST', '/api/v1/members/11/runtime/', { status: 200, body: { member: { ...pool.members[0], weight: 7 }, revision: 9 } });
    const { user } = renderWithProviders(<MembersPanel pool={pool} />);
    const weight = await screen.findByRole('spinbutton', { name: 'Live weight of s1' });
    await user.clear(weight);
    await user.type(weight, '300');
    await user.click(screen.getByRole('button', { name: 'Set live weight of s1' }));
    expect(weight).toHaveAccessibleDescription('The weight must be between 0 and 256.');
    expect(changes()).toHaveLength(0);

    await user.clear(weight);
    await user.type(weight, '7');
    await user.click(screen.getByRole('button', { name: 'Set live weight of s1' }));
    expect(apiCalls).toContainEqual({ method: 'POST', path: '/api/v1/members/11/runtime/', body: { weight: 7 } });
    expect(await screen.findByText('Weight of s1 set to 7 (revision 9).')).toBeInTheDocument();
  });

  it('edits a member in the form below the table', async () => {
    const { user } = renderWithProviders(<MembersPanel pool={pool} />);
    await user.click(await screen.findByRole('button', { name: 'Edit member s2' }));
    expect(screen.getByRole('heading', { name: 'Edit member s2' })).toBeInTheDocument();
    expect(screen.getByRole('spinbutton', { name: 'Weight' })).toHaveValue(5);
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.getByRole('heading', { name: 'Add a member' })).toBeInTheDocument();
  });

  it('asks before deleting a member', async () => {
    mockApi('DELETE', '/api/v1/members/12/', { status: 204 });
    const { user } = renderWithProviders(<MembersPanel pool={pool} />);
    await user.click(await screen.findByRole('button', { name: 'Delete member s2' }));
    expect(changes()).toHaveLength(0);
    await user.click(screen.getByRole('button', { name: 'Yes, delete: member s2' }));
    expect(apiCalls).toContainEqual({ method: 'DELETE', path: '/api/v1/members/12/', body: undefined });
  });
});

describe('MembersPanel, dynamic least load', () => {
  const live = (node: string, load: number | null, connections: number, feed: string, message = '') => ({
    node,
    reported_at: '2026-11-22T08:00:00Z',
    layer: 'ipvs' as const,
    load_milli: load,
    load_at: load === null ? null : '2026-11-22T08:00:00Z',
    connections,
    weight: 1,
    feed,
    message,
  });
  const dllc: Pool = {
    ...pool,
    algorithm: 'dynamic-least-load',
    members: [
      { ...s1, live: [live('lb1', 300, 8, 'ip_vs_dllc')] },
      { ...s2, live: [live('lb1', null, 0, 'ip_vs_dllc', 'no fresh load: fulcrum-loadd has not answered yet')] },
    ],
  };

  it("shows each member's live load and connections", () => {
    renderWithProviders(<MembersPanel pool={dllc} />);
    const table = screen.getByRole('table', { name: 'Members of web' });
    expect(within(table).getByRole('columnheader', { name: 'Load' })).toBeInTheDocument();
    const [, s1, s2] = within(table).getAllByRole('row');
    expect(s1).toHaveTextContent('30 %');
    expect(s1).toHaveTextContent('8 (weight 1)');
    expect(s2).toHaveTextContent('unknown');
    expect(s2).toHaveTextContent('fulcrum-loadd has not answered yet');
    expect(screen.getByText(/In force on lb1: the ip_vs_dllc kernel module\./)).toBeInTheDocument();
  });

  it('says when least connection with load weights stands in for the missing module', () => {
    const fallback: Pool = { ...dllc, members: [{ ...s1, live: [live('lb1', 500, 2, 'wlc weights')] }] };
    renderWithProviders(<MembersPanel pool={fallback} />);
    expect(screen.getByText(/lb1: wlc weights \(the ip_vs_dllc module is missing/)).toBeInTheDocument();
  });

  it('has no load columns for other algorithms', () => {
    renderWithProviders(<MembersPanel pool={pool} />);
    expect(screen.queryByRole('columnheader', { name: 'Load' })).not.toBeInTheDocument();
  });
});

describe('MembersPanel, health and traffic', () => {
  const row = async (name: string) => {
    const table = await screen.findByRole('table', { name: 'Members of web' });
    return within(table).getByRole('row', { name: new RegExp(`^${name}\\b`) });
  };

  it("shows each member's health per node, with the reason it is down", async () => {
    renderWithProviders(<MembersPanel pool={pool} />);
    const s1Row = await row('s1');
    expect(await within(s1Row).findByText('L7STS: HTTP status 503')).toBeInTheDocument();
    expect(within(s1Row).getByText('down')).toHaveClass('badge-danger');
    expect(s1Row).toHaveTextContent('check 4 ms');
    const s2Row = await row('s2');
    // Two nodes check s2: each is named; lb2 has not reported lately.
    expect(within(s2Row).getByText('lb2:')).toBeInTheDocument();
    expect(within(s2Row).getByText('stale')).toBeInTheDocument();
    expect(s2Row).toHaveTextContent('last failure: L4TOUT: timeout after 1000 ms');
  });

  it("shows a member's traffic with its graph", async () => {
    renderWithProviders(<MembersPanel pool={pool} />);
    const s2Row = await row('s2');
    expect(await within(s2Row).findByText('3 req/s, 5 conn')).toBeInTheDocument();
    expect(within(s2Row).getByText('in 1.5kB/s, out 64kB/s')).toBeInTheDocument();
    expect(within(s2Row).getByRole('figure', { name: /Requests per second to s2, last hour/ })).toBeInTheDocument();
    expect(within(await row('s1')).getByText('no traffic reported')).toBeInTheDocument();
  });

  it("opens a member's health history on demand", async () => {
    const { user } = renderWithProviders(<MembersPanel pool={pool} />);
    const toggle = within(await row('s1')).getByRole('button', { name: 'History of s1' });
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(apiCalls.some((c) => c.path === '/api/v1/health-events/')).toBe(false);
    await user.click(toggle);
    expect(toggle).toHaveAttribute('aria-expanded', 'true');
    const history = await screen.findByRole('table', { name: 'Health history of s1' });
    const [, first] = within(history).getAllByRole('row');
    expect(first).toHaveTextContent('lb1');
    expect(first).toHaveTextContent('up → down');
    expect(first).toHaveTextContent('L7STS: HTTP status 503');
    await user.click(screen.getByRole('button', { name: 'Hide history of s1' }));
    expect(screen.queryByRole('table', { name: 'Health history of s1' })).not.toBeInTheDocument();
  });

  it('reads the health again after a one-click drain', async () => {
    mockApi('POST', '/api/v1/members/12/runtime/', { status: 200, body: { member: { ...s2, state: 'drain' }, revision: 8 } });
    const { user } = renderWithProviders(<MembersPanel pool={{ ...pool, members: [s1, { ...s2, state: 'enabled' }] }} />);
    const group = await screen.findByRole('group', { name: 'State of s2' });
    await waitFor(() => expect(apiCalls.filter((c) => c.path === '/api/v1/health/')).toHaveLength(1));
    await user.click(within(group).getByRole('button', { name: 'Drain' }));
    expect(await screen.findByText('s2 draining (revision 8).')).toBeInTheDocument();
    await waitFor(() => expect(apiCalls.filter((c) => c.path === '/api/v1/health/')).toHaveLength(2));
  });

  it('gives a viewer the figures but no controls', async () => {
    asRole('viewer');
    const { queryClient } = renderWithProviders(<MembersPanel pool={pool} />);
    expect(await within(await row('s1')).findByText('L7STS: HTTP status 503')).toBeInTheDocument();
    await waitFor(() => expect(queryClient.getQueryData(queryKeys.me)).toMatchObject({ role: 'viewer' }));
    expect(screen.queryByRole('group', { name: 'State of s1' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Drain' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Edit member s1' })).not.toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Add a member' })).not.toBeInTheDocument();
    expect(screen.queryByRole('columnheader', { name: 'Live (no apply needed)' })).not.toBeInTheDocument();
  });

  it('lets an operator drain but not edit', async () => {
    asRole('operator');
    renderWithProviders(<MembersPanel pool={pool} />);
    expect(await screen.findByRole('group', { name: 'State of s1' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Edit member s1' })).not.toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Add a member' })).not.toBeInTheDocument();
  });

  it('warns when the health cannot be read, and still lists the members', async () => {
    mockApi('GET', '/api/v1/health/', { status: 500, body: { detail: 'telemetry store down' } });
    renderWithProviders(<MembersPanel pool={pool} />);
    expect(await screen.findByText(/Health and traffic could not be read: telemetry store down/)).toBeInTheDocument();
    expect(screen.getAllByRole('row')).toHaveLength(3);
  });
});

describe('PoolMembers (on a service page)', () => {
  it("loads the pool and shows its members' table without the editor", async () => {
    mockApi('GET', '/api/v1/pools/3/', { status: 200, body: pool });
    renderWithProviders(<PoolMembers poolId={3} />);
    expect(await screen.findByRole('heading', { name: 'Members of pool web' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Open the pool' })).toHaveAttribute('href', '/pools/3');
    expect(await screen.findByText('L7STS: HTTP status 503')).toBeInTheDocument();
    expect(await screen.findByRole('group', { name: 'State of s1' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Edit member s1' })).not.toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Add a member' })).not.toBeInTheDocument();
  });
});
