import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { apiCalls, mockApi } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { Member, Pool } from '../types';
import { MembersPanel } from './MembersPanel';

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

describe('MembersPanel', () => {
  it('lists members with their state pressed', () => {
    renderWithProviders(<MembersPanel pool={pool} />);
    const table = screen.getByRole('table', { name: 'Members of web' });
    expect(within(table).getAllByRole('row')).toHaveLength(3);
    const s2 = within(table).getByRole('group', { name: 'State of s2' });
    expect(within(s2).getByRole('button', { name: 'Drain' })).toHaveAttribute('aria-pressed', 'true');
    expect(within(s2).getByRole('button', { name: 'Enable' })).toHaveAttribute('aria-pressed', 'false');
  });

  it('drains a live member with one click, through the runtime API', async () => {
    mockApi('POST', '/api/v1/members/11/runtime/', { status: 200, body: { member: { ...pool.members[0], state: 'drain' }, revision: 8 } });
    const { user } = renderWithProviders(<MembersPanel pool={pool} />);
    await user.click(within(screen.getByRole('group', { name: 'State of s1' })).getByRole('button', { name: 'Drain' }));
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
    await user.click(within(screen.getByRole('group', { name: 'State of s2' })).getByRole('button', { name: 'Disable' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'Not changed: not in the live configuration yet; apply the pending changes first.',
    );
  });

  it('sets a live weight, and refuses one out of range before sending', async () => {
    mockApi('POST', '/api/v1/members/11/runtime/', { status: 200, body: { member: { ...pool.members[0], weight: 7 }, revision: 9 } });
    const { user } = renderWithProviders(<MembersPanel pool={pool} />);
    const weight = screen.getByRole('spinbutton', { name: 'Live weight of s1' });
    await user.clear(weight);
    await user.type(weight, '300');
    await user.click(screen.getByRole('button', { name: 'Set live weight of s1' }));
    expect(weight).toHaveAccessibleDescription('The weight must be between 0 and 256.');
    expect(apiCalls).toHaveLength(0);

    await user.clear(weight);
    await user.type(weight, '7');
    await user.click(screen.getByRole('button', { name: 'Set live weight of s1' }));
    expect(apiCalls).toContainEqual({ method: 'POST', path: '/api/v1/members/11/runtime/', body: { weight: 7 } });
    expect(await screen.findByText('Weight of s1 set to 7 (revision 9).')).toBeInTheDocument();
  });

  it('edits a member in the form below the table', async () => {
    const { user } = renderWithProviders(<MembersPanel pool={pool} />);
    await user.click(screen.getByRole('button', { name: 'Edit member s2' }));
    expect(screen.getByRole('heading', { name: 'Edit member s2' })).toBeInTheDocument();
    expect(screen.getByRole('spinbutton', { name: 'Weight' })).toHaveValue(5);
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.getByRole('heading', { name: 'Add a member' })).toBeInTheDocument();
  });

  it('asks before deleting a member', async () => {
    mockApi('DELETE', '/api/v1/members/12/', { status: 204 });
    const { user } = renderWithProviders(<MembersPanel pool={pool} />);
    await user.click(screen.getByRole('button', { name: 'Delete member s2' }));
    expect(apiCalls).toHaveLength(0);
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
