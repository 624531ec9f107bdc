import { screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { sessionLoaded, signedInAs } from '@/test/session';
import type { HaGroup } from '../types';
import { HaPage } from './HaPage';

const since = '2026-11-22T10:00:00Z';
const NODES = [
  { id: 1, name: 'lb1', address: '10.0.1.3', standby: false, vrrp: [{ group: 'front', state: 'master', priority: 150, since }] },
  { id: 2, name: 'lb2', address: '10.0.1.4', standby: true, vrrp: [{ group: 'front', state: 'fault', priority: 0, since }] },
];
const FRONT: HaGroup = {
  id: 7, name: 'front', vrid: 51, interface: 'eth1', vips: ['10.0.0.10', '10.0.0.11'], vrrp_version: 3, advert_interval_ms: 200, preempt: true,
  preempt_delay_s: 0, authentication: false, track_haproxy: true, track_interfaces: [], witness: '10.0.0.1', garp_refresh_s: 60, garp_repeat: 3,
  nodes: [{ node: 2, priority: 100, interface: 'ens3' }, { node: 1, priority: 150, interface: '' }],
};

function mockPage(groups: HaGroup[] = [FRONT]) {
  signedInAs('admin');
  mockApi('GET', '/api/v1/nodes/', { status: 200, body: page(NODES) });
  mockApi('GET', '/api/v1/ha-groups/', { status: 200, body: page(groups) });
  mockApi('GET', '/api/v1/ha-events/', { status: 200, body: page([]) });
}

describe('HaPage', () => {
  beforeEach(() => mockPage());

  it("lists each group with its nodes by priority and the state each node's agent reports", async () => {
    renderWithProviders(<HaPage />);
    const table = await screen.findByRole('table', { name: 'HA groups' });
    const row = within(table).getByRole('row', { name: /^front/ });
    expect(row).toHaveTextContent('51');
    expect(row).toHaveTextContent('200 ms');
    expect(row).toHaveTextContent('witness 10.0.0.1');
    expect(within(row).getByRole('list', { name: 'VIPs of front' })).toHaveTextContent('10.0.0.1010.0.0.11');
    const [first, second] = within(within(row).getByRole('list', { name: 'Nodes of front' })).getAllByRole('listitem');
    expect(first).toHaveTextContent('lb1 150 master');
    expect(second).toHaveTextContent('lb2 100 fault standby on ens3');
  });

  it('creates a group, showing the server refusal first', async () => {
    mockApi('POST', '/api/v1/ha-groups/', { status: 400, body: { advert_interval_ms: ['205 ms: from 10 to 40950 ms, a multiple of 10 ms (VRRPv3 counts centiseconds)'] } });
    const { user } = renderWithProviders(<HaPage />);
    await user.click(await screen.findByRole('button', { name: 'New HA group' }));
    const editor = screen.getByRole('region', { name: 'New HA group' });
    expect(within(editor).getByRole('textbox', { name: 'Name' })).toHaveFocus();
    // The next VRID after 50 that no group uses.
    expect(within(editor).getByRole('spinbutton', { name: 'VRID' })).toHaveValue(52);
    await user.type(within(editor).getByRole('textbox', { name: 'Name' }), 'back');
    await user.type(within(editor).getByRole('textbox', { name: 'VIPs' }), '10.0.0.20');
    const node = within(editor).getByRole('group', { name: 'Node 1' });
    await user.selectOptions(within(node).getByRole('combobox', { name: 'Node' }), '1');
    await user.click(within(editor).getByRole('button', { name: 'Create HA group' }));
    expect(await within(editor).findByText(/205 ms: from 10 to 40950 ms/)).toBeInTheDocument();

    mockApi('POST', '/api/v1/ha-groups/', { status: 201, body: { ...FRONT, id: 8, name: 'back', vrid: 52 } });
    await user.click(within(editor).getByRole('button', { name: 'Create HA group' }));
    expect(await screen.findByText('HA group back saved; apply to put it on the nodes.')).toBeInTheDocument();
    expect(screen.queryByRole('region', { name: 'New HA group' })).not.toBeInTheDocument();
    expect(apiCalls.filter((call) => call.method === 'POST').at(-1)?.body).toEqual(
      expect.objectContaining({ name: 'back', vrid: 52, vips: ['10.0.0.20'], nodes: [{ node: 1, priority: 100, interface: '' }] }),
    );
  });

  it('mirrors a group for active/active: same nodes with the priorities swapped, the next VRID, no VIPs', async () => {
    mockApi('POST', '/api/v1/ha-groups/', { status: 201, body: { ...FRONT, id: 9, name: 'front-mirror' } });
    const { user } = renderWithProviders(<HaPage />);
    await user.click(await screen.findByRole('button', { name: 'Mirror HA group front' }));
    const editor = screen.getByRole('region', { name: 'Mirror of front' });
    expect(within(editor).getByRole('textbox', { name: 'Name' })).toHaveValue('front-mirror');
    expect(within(editor).getByRole('spinbutton', { name: 'VRID' })).toHaveValue(52);
    expect(within(editor).getByRole('textbox', { name: 'VIPs' })).toHaveValue('');
    expect(within(editor).getByRole('textbox', { name: 'Witness' })).toHaveValue('10.0.0.1');
    const rows = ['Node 1', 'Node 2'].map((name) => within(editor).getByRole('group', { name }));
    expect(rows.map((r) => within(r).getByRole('combobox', { name: 'Node' }))).toEqual([expect.objectContaining({ value: '1' }), expect.objectContaining({ value: '2' })]);
    expect(rows.map((r) => within(r).getByRole('spinbutton', { name: 'Priority' }))).toEqual([expect.objectContaining({ value: '100' }), expect.objectContaining({ value: '150' })]);

    await user.click(within(editor).getByRole('button', { name: 'Create HA group' }));
    expect(within(editor).getByRole('textbox', { name: 'VIPs' })).toHaveAccessibleDescription(/Enter at least one VIP/);
    await user.type(within(editor).getByRole('textbox', { name: 'VIPs' }), '10.0.0.11');
    await user.click(within(editor).getByRole('button', { name: 'Create HA group' }));
    expect(await screen.findByText('HA group front-mirror saved; apply to put it on the nodes.')).toBeInTheDocument();
    expect(apiCalls.filter((call) => call.method === 'POST').at(-1)?.body).toEqual(
      expect.objectContaining({
        name: 'front-mirror', vrid: 52, vips: ['10.0.0.11'], witness: '10.0.0.1',
        nodes: [{ node: 1, priority: 100, interface: '' }, { node: 2, priority: 150, interface: 'ens3' }],
      }),
    );
  });

  it('edits a group with PUT and says why a delete is refused', async () => {
    mockApi('PUT', '/api/v1/ha-groups/7/', { status: 200, body: FRONT });
    mockApi('DELETE', '/api/v1/ha-groups/7/', { status: 409, body: { detail: 'Cannot delete: in use by the IPVS connection sync settings.' } });
    const { user } = renderWithProviders(<HaPage />);
    await user.click(await screen.findByRole('button', { name: 'Edit HA group front' }));
    const editor = screen.getByRole('region', { name: 'Edit HA group front' });
    await user.click(within(editor).getByRole('button', { name: 'Save HA group' }));
    expect(await screen.findByText('HA group front saved; apply to put it on the nodes.')).toBeInTheDocument();
    expect(apiCalls.find((call) => call.method === 'PUT')?.body).toEqual(expect.objectContaining({ name: 'front', vrid: 51, interface: 'eth1' }));

    await user.click(screen.getByRole('button', { name: 'Delete HA group front' }));
    await user.click(screen.getByRole('button', { name: 'Yes, delete: HA group front' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('in use by the IPVS connection sync settings');
  });

  it('says so when there are no groups', async () => {
    mockPage([]);
    renderWithProviders(<HaPage />);
    expect(await screen.findByText('No HA groups yet')).toBeInTheDocument();
  });

  it.each(['viewer', 'operator'] as const)('shows a %s the groups and their states with nothing to change', async (role) => {
    signedInAs(role);
    const { queryClient } = renderWithProviders(<HaPage />);
    await sessionLoaded(queryClient);
    const table = await screen.findByRole('table', { name: 'HA groups' });
    expect(within(table).getByRole('list', { name: 'Nodes of front' })).toHaveTextContent('lb1 150 master');
    expect(within(table).getAllByRole('columnheader')).toHaveLength(6);
    expect(screen.queryByRole('button', { name: /HA group/ })).not.toBeInTheDocument();
    expect(within(table).queryByRole('button')).not.toBeInTheDocument();
  });
});
