import { screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it } from 'vitest';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { sessionLoaded, signedInAs } from '@/test/session';
import { NodesPage } from './NodesPage';

const SYNC = { enabled: false, interface: 'eth0', sync_id: 0, port: 8848, ttl: 1, max_packet: 0, group: null, ha_group: null };
const at = '2026-11-22T10:00:00Z';

function mockSync(body: unknown = SYNC) {
  mockApi('GET', '/api/v1/ipvs-sync/', { status: 200, body });
  mockApi('GET', '/api/v1/ha-groups/', { status: 200, body: page([{ id: 7, name: 'front' }, { id: 8, name: 'back' }]) });
}

const SINGLE = { role: 'primary', state: 'single', synchronous_standby_names: '', standbys: [], slots: [], primary: null, lag_bytes: null };

function mockNewest(number: number | null, live = true) {
  const results = number === null ? [] : [{ id: number, number, message: '', author: 'admin', created_at: at, nodes: [], live }];
  mockApi('GET', '/api/v1/revisions/', { status: 200, body: page(results) });
}

function haNode(id: number, name: string, applied: number | null, more: object = {}) {
  return { id, name, address: null, standby: false, last_seen: at, applied_revision: applied, status_at: at, networks: [], ipvs_status: [], vrrp: [], management: '', ...more };
}

describe('NodesPage', () => {
  beforeEach(() => {
    signedInAs('admin');
    mockSync();
    mockNewest(null);
    mockApi('GET', '/api/v1/join-codes/', { status: 200, body: page([]) });
    mockApi('GET', '/api/v1/cluster/replication/', { status: 200, body: SINGLE });
    mockApi('GET', '/api/v1/daemon-events/', { status: 200, body: page([]) });
  });

  it('lists the daemons the agents found stopped and started again, or could not', async () => {
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([haNode(1, 'lb1', 3)]) });
    const restarted = { id: 2, node: 'lb1', daemon: 'haproxy', at, outcome: 'restarted', detail: 'it had stopped; started it again from the live configuration (revision 3)', received_at: at };
    const failed = { ...restarted, id: 1, daemon: 'keepalived', outcome: 'restart-failed', detail: 'keepalived: cannot bind' };
    mockApi('GET', '/api/v1/daemon-events/', { status: 200, body: page([restarted, failed]) });
    renderWithProviders(<NodesPage />);
    const panel = await screen.findByRole('region', { name: 'Daemon restarts' });
    const table = await within(panel).findByRole('table', { name: 'Daemon restarts, newest first' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((row) => row.textContent)).toEqual([
      expect.stringMatching(/lb1HAProxyrestartedit had stopped; started it again from the live configuration \(revision 3\)$/),
      expect.stringMatching(/lb1keepalivedcould not restartkeepalived: cannot bind$/),
    ]);
  });

  it('says when no daemon has stopped', async () => {
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([]) });
    renderWithProviders(<NodesPage />);
    const panel = await screen.findByRole('region', { name: 'Daemon restarts' });
    expect(await within(panel).findByText('No daemon has stopped on any node.')).toBeInTheDocument();
  });

  it('shows how the cluster database replicates: synchronous with a standby, degraded without', async () => {
    const lb2 = { name: 'lb2', address: '192.0.2.12', state: 'streaming', sync_state: 'quorum', lag_bytes: 2048, silent_s: 0.4, flushes: true };
    let replication: object = { ...SINGLE, state: 'synchronous', synchronous_standby_names: 'ANY 1 (*)', standbys: [lb2], slots: ['lb2'] };
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([]) });
    mockApi('GET', '/api/v1/cluster/replication/', () => ({ status: 200, body: replication }));
    const { queryClient } = renderWithProviders(<NodesPage />);
    const panel = await screen.findByRole('region', { name: 'Cluster database' });
    expect(await within(panel).findByText(/on two appliances before it is acknowledged/)).toHaveTextContent(/^primary synchronous A standby/);
    const row = within(within(panel).getByRole('table', { name: 'Standbys' })).getByRole('row', { name: /^lb2/ });
    expect(row).toHaveTextContent('192.0.2.12');
    expect(row).toHaveTextContent('yes');
    expect(row).toHaveTextContent('2.0kB');
    expect(row).toHaveTextContent('0.4 s ago');

    replication = { ...SINGLE, state: 'degraded', slots: ['lb2'] };
    await queryClient.invalidateQueries({ queryKey: ['nodes', 'replication'] });
    expect(await within(panel).findByText(/A standby is away/)).toBeInTheDocument();
    expect(within(panel).getByText('Waiting for: lb2.')).toBeInTheDocument();
    expect(within(panel).queryByRole('table', { name: 'Standbys' })).not.toBeInTheDocument();
  });

  it('makes a join code, shows it once, lists it and revokes it', async () => {
    const made = { id: 3, code_id: 'K7QM', created_by: 'admin', created_at: at, expires_at: '2026-11-22T10:30:00Z', used_at: null, node: null, state: 'usable' };
    const used = { ...made, id: 2, code_id: 'AB12', state: 'used', node: 'lb2', used_at: at };
    let codes: object[] = [used];
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([]) });
    mockApi('GET', '/api/v1/join-codes/', () => ({ status: 200, body: page(codes) }));
    mockApi('POST', '/api/v1/join-codes/', () => {
      codes = [made, used];
      return { status: 201, body: { ...made, code: 'K7QM-W2XD-9HRT-5BNP-3CAZ' } };
    });
    mockApi('DELETE', '/api/v1/join-codes/3/', () => {
      codes = [used];
      return { status: 204 };
    });
    const { user } = renderWithProviders(<NodesPage />);
    const panel = await screen.findByRole('region', { name: 'Add an appliance' });
    expect(await within(panel).findByText('joined: lb2')).toBeInTheDocument();

    await user.click(within(panel).getByRole('button', { name: 'Make a join code' }));
    expect(await screen.findByLabelText('Join code')).toHaveTextContent('K7QM-W2XD-9HRT-5BNP-3CAZ');
    expect(screen.getByText(/It works once, until/)).toBeInTheDocument();
    const table = await within(panel).findByRole('table', { name: 'Join codes' });
    await within(table).findByRole('row', { name: /^K7QM/ });
    await user.click(screen.getByRole('button', { name: 'I have noted the code' }));
    expect(screen.queryByText('K7QM-W2XD-9HRT-5BNP-3CAZ')).not.toBeInTheDocument();

    await user.click(within(table).getByRole('button', { name: 'Revoke join code K7QM' }));
    await user.click(screen.getByRole('button', { name: 'Yes, revoke: join code K7QM' }));
    await within(panel).findByText('joined: lb2');
    expect(apiCalls.filter((c) => c.method === 'DELETE' && c.path === '/api/v1/join-codes/3/')).toHaveLength(1);
    await expect.poll(() => within(panel).queryAllByRole('row').length).toBe(2);
  });

  it('says so when there are no nodes', async () => {
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([]) });
    renderWithProviders(<NodesPage />);
    expect(await screen.findByText('No nodes yet')).toBeInTheDocument();
  });

  it('shows the new token once, with a copy button', async () => {
    const nodes = [{ id: 1, name: 'lb1', last_seen: null, applied_revision: 0 }];
    mockApi('GET', '/api/v1/nodes/', () => ({ status: 200, body: page(nodes) }));
    mockApi('POST', '/api/v1/nodes/', { status: 201, body: { id: 2, name: 'lb2', last_seen: null, applied_revision: 0, token: 'secret-token-1' } });
    const { user } = renderWithProviders(<NodesPage />);

    expect(await screen.findByRole('rowheader', { name: 'lb1' })).toBeInTheDocument();
    await user.type(screen.getByRole('textbox', { name: 'Node name' }), 'lb2');
    await user.click(screen.getByRole('button', { name: 'Add node' }));

    expect(await screen.findByLabelText('Agent token for lb2')).toHaveTextContent('secret-token-1');
    await user.click(screen.getByRole('button', { name: 'Copy token' }));
    // user-event stands in for the clipboard
    await expect(navigator.clipboard.readText()).resolves.toBe('secret-token-1');
    expect(await screen.findByText('Copied.')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'I have stored the token' }));
    expect(screen.queryByText('secret-token-1')).not.toBeInTheDocument();
    expect(within(screen.getByRole('table', { name: 'Registered nodes' })).getAllByRole('row')).toHaveLength(2);
  });

  it("shows the server's refusal next to the node name", async () => {
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([]) });
    mockApi('POST', '/api/v1/nodes/', { status: 400, body: { name: ['node with this name already exists.'] } });
    const { user } = renderWithProviders(<NodesPage />);
    await user.type(await screen.findByRole('textbox', { name: 'Node name' }), 'lb1');
    await user.click(screen.getByRole('button', { name: 'Add node' }));
    expect(await screen.findByText('node with this name already exists.')).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Node name' })).toHaveAccessibleDescription(/already exists/);
  });

  it("shows each node's networks and flags a scheduler the kernel does not run, with why", async () => {
    const at = '2026-01-02T03:04:05Z';
    const node = {
      id: 1, name: 'lb1', last_seen: at, applied_revision: 7, status_at: at,
      networks: ['10.0.2.254/24', 'fd00::1/64'],
      ipvs_status: [
        { key: 'tcp 10.0.0.1:80', name: 'nat', scheduler_wanted: 'dllc', scheduler_in_force: 'wlc', message: 'kernel has no dllc scheduler' },
        { key: 'udp 10.0.0.1:53', name: 'dns', scheduler_wanted: 'rr', scheduler_in_force: 'rr', message: '' },
      ],
    };
    const silent = { id: 2, name: 'lb2', last_seen: null, applied_revision: null, status_at: null, networks: [], ipvs_status: [] };
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([node, silent]) });
    renderWithProviders(<NodesPage />);

    const networks = await screen.findByRole('list', { name: 'Networks of lb1' });
    expect(within(networks).getAllByRole('listitem').map((item) => item.textContent)).toEqual(['10.0.2.254/24', 'fd00::1/64']);
    const schedulers = screen.getByRole('list', { name: 'IPVS schedulers on lb1' });
    const [nat, dns] = within(schedulers).getAllByRole('listitem');
    expect(nat).toHaveTextContent('differs nat: wants dllc, runs wlc');
    expect(nat).toHaveTextContent('kernel has no dllc scheduler');
    expect(nat).toHaveClass('scheduler-mismatch');
    expect(dns).toHaveTextContent('dns: rr');
    expect(dns).not.toHaveTextContent('differs');
    expect(screen.getByRole('row', { name: /^lb2/ })).toHaveTextContent('not reported');
  });

  it('saves the IPVS sync settings and puts refusals next to their fields', async () => {
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([]) });
    const { user } = renderWithProviders(<NodesPage />);
    const form = await screen.findByRole('form', { name: 'IPVS connection sync' });
    const group = within(form).getByRole('textbox', { name: 'Multicast group' });
    await user.type(group, '10.0.0.1');
    await user.click(within(form).getByRole('button', { name: 'Save sync settings' }));
    expect(group).toHaveAccessibleDescription(/A multicast address/);

    mockApi('PUT', '/api/v1/ipvs-sync/', { status: 400, body: { interface: ["invalid interface 'eth9': no such interface"] } });
    await user.clear(group);
    await user.click(within(form).getByRole('checkbox', { name: 'Synchronise connections' }));
    const iface = within(form).getByRole('textbox', { name: 'Interface' });
    await user.clear(iface);
    await user.type(iface, 'eth9');
    await user.click(within(form).getByRole('button', { name: 'Save sync settings' }));
    expect(await within(form).findByText("invalid interface 'eth9': no such interface")).toBeInTheDocument();
    expect(iface).toHaveAccessibleDescription(/no such interface/);

    const saved = { ...SYNC, enabled: true, interface: 'eth1', sync_id: 7, group: '239.1.1.1' };
    mockApi('PUT', '/api/v1/ipvs-sync/', { status: 200, body: saved });
    await user.clear(iface);
    await user.type(iface, 'eth1');
    const id = within(form).getByRole('spinbutton', { name: 'Sync ID' });
    await user.clear(id);
    await user.type(id, '7');
    await user.type(group, '239.1.1.1');
    await user.click(within(form).getByRole('button', { name: 'Save sync settings' }));
    expect(await screen.findByText('Sync settings saved; apply to put them on the nodes.')).toBeInTheDocument();
    expect(apiCalls.filter((call) => call.method === 'PUT').at(-1)?.body).toEqual({
      enabled: true, interface: 'eth1', sync_id: 7, port: 8848, ttl: 1, max_packet: 0, group: '239.1.1.1', ha_group: null,
    });
    expect(apiCalls.filter((call) => call.method === 'PUT')[0]?.body).toEqual(expect.objectContaining({ interface: 'eth9', group: null }));
  });

  it('has the connection sync follow an HA group', async () => {
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([]) });
    mockSync({ ...SYNC, enabled: true, ha_group: 8 });
    mockApi('PUT', '/api/v1/ipvs-sync/', { status: 200, body: { ...SYNC, enabled: true, ha_group: 7 } });
    const { user } = renderWithProviders(<NodesPage />);
    const form = await screen.findByRole('form', { name: 'IPVS connection sync' });
    const group = within(form).getByRole('combobox', { name: 'HA group' });
    expect(group).toHaveValue('8');
    expect(within(group).getAllByRole('option').map((o) => o.textContent)).toEqual(['None: every node sends and receives', 'front', 'back']);
    await user.selectOptions(group, 'front');
    await user.click(within(form).getByRole('button', { name: 'Save sync settings' }));
    expect(await screen.findByText('Sync settings saved; apply to put them on the nodes.')).toBeInTheDocument();
    expect(apiCalls.find((call) => call.method === 'PUT')?.body).toEqual(expect.objectContaining({ enabled: true, ha_group: 7 }));
  });

  it("shows which revision each node runs against the newest, and each node's VRRP states", async () => {
    mockNewest(14, false);
    const vrrp = [
      { group: 'front', state: 'master', priority: 150, since: at },
      { group: 'back', state: 'backup', priority: 100, since: null },
    ];
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([haNode(1, 'lb1', 14, { vrrp }), haNode(2, 'lb2', 12, { standby: true })]) });
    renderWithProviders(<NodesPage />);

    expect(await screen.findByText('Newest revision #14: lb2 runs #12.')).toBeInTheDocument();
    const lb1 = screen.getByRole('row', { name: /^lb1/ });
    const lb2 = screen.getByRole('row', { name: /^lb2/ });
    expect(lb1).toHaveTextContent('#14 newest');
    expect(lb2).toHaveTextContent('#12 behindnewest #14');
    expect(lb2).toHaveTextContent('standby master roles handed over');
    const [back, front] = within(screen.getByRole('list', { name: 'VRRP states of lb1' })).getAllByRole('listitem');
    expect(back).toHaveTextContent('back backup 100');
    expect(front).toHaveTextContent('front master 150since');
    expect(lb2).toHaveTextContent('in no HA group');
  });

  it("shows which appliance holds the management VIP, and the other's part", async () => {
    const vrrp = [{ group: 'front', state: 'backup', priority: 100, since: null }];
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([haNode(1, 'lb1', 14, { management: 'master' }), haNode(2, 'lb2', 14, { management: 'backup', vrrp })]) });
    renderWithProviders(<NodesPage />);
    const lb1 = within(await screen.findByRole('list', { name: 'VRRP states of lb1' })).getAllByRole('listitem');
    expect(lb1.map((item) => item.textContent)).toEqual(['management VIP masterholds it: the cluster database takes changes here']);
    const lb2 = within(screen.getByRole('list', { name: 'VRRP states of lb2' })).getAllByRole('listitem');
    expect(lb2.map((item) => item.textContent)).toEqual(['management VIP backup', 'front backup 100']);
  });

  it("saves a node's HA address and shows the server's refusal next to it", async () => {
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([haNode(1, 'lb1', null)]) });
    const { user } = renderWithProviders(<NodesPage />);
    const address = await screen.findByRole('textbox', { name: 'HA address of lb1' });
    await user.type(address, '10.0.1');
    await user.click(screen.getByRole('button', { name: 'Save HA address of lb1' }));
    expect(address).toHaveAccessibleDescription('An IPv4 or IPv6 address, or empty for none.');

    mockApi('PATCH', '/api/v1/nodes/1/', { status: 400, body: { address: ["HA group v6's VIPs are another IP family than this address"] } });
    await user.type(address, '.3');
    await user.click(screen.getByRole('button', { name: 'Save HA address of lb1' }));
    expect(await screen.findByText("HA group v6's VIPs are another IP family than this address")).toBeInTheDocument();
    expect(address).toHaveAttribute('aria-invalid', 'true');

    mockApi('PATCH', '/api/v1/nodes/1/', { status: 200, body: haNode(1, 'lb1', null, { address: '10.0.1.3' }) });
    await user.click(screen.getByRole('button', { name: 'Save HA address of lb1' }));
    expect(await screen.findByText('Saved; apply to use it.')).toBeInTheDocument();
    expect(apiCalls.filter((call) => call.method === 'PATCH').map((call) => call.body)).toEqual([{ address: '10.0.1.3' }, { address: '10.0.1.3' }]);
  });

  it('hands a node\'s master roles over after a confirmation and shows the revision, or the refusal', async () => {
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([haNode(1, 'lb1', 14)]) });
    mockApi('POST', '/api/v1/nodes/1/standby/', { status: 409, body: { detail: 'Not changed.', problems: [{ path: 'nodes/lb1', message: 'not in the live configuration yet; apply first' }] } });
    const { user } = renderWithProviders(<NodesPage />);
    await user.click(await screen.findByRole('button', { name: 'Hand over master roles of lb1' }));
    expect(apiCalls.some((call) => call.method === 'POST')).toBe(false);
    await user.click(screen.getByRole('button', { name: 'Yes, hand over: node lb1' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Not changed: not in the live configuration yet; apply first.');

    mockApi('POST', '/api/v1/nodes/1/standby/', { status: 200, body: { node: haNode(1, 'lb1', 14, { standby: true }), revision: 15 } });
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([haNode(1, 'lb1', 14, { standby: true })]) });
    await user.click(screen.getByRole('button', { name: 'Hand over master roles of lb1' }));
    await user.click(screen.getByRole('button', { name: 'Yes, hand over: node lb1' }));
    expect(await screen.findByText('lb1 hands over its master roles: revision 15.')).toBeInTheDocument();
    expect(apiCalls.filter((call) => call.method === 'POST').map((call) => call.body)).toEqual([{ standby: true }, { standby: true }]);
    expect(await screen.findByRole('button', { name: 'Take part again: lb1' })).toBeInTheDocument();
  });

  it('switches over to the synchronous standby after a confirmation, or shows the refusal', async () => {
    const lb2 = { name: 'lb2', address: '192.0.2.12', state: 'streaming', sync_state: 'quorum', lag_bytes: 0, silent_s: 0.2, flushes: true };
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([]) });
    mockApi('GET', '/api/v1/cluster/replication/', { status: 200, body: { ...SINGLE, state: 'synchronous', standbys: [lb2], slots: ['lb2'] } });
    mockApi('POST', '/api/v1/cluster/switchover/', { status: 409, body: { detail: 'lb2 did not catch up within 30 s: nothing handed over' } });
    const { user } = renderWithProviders(<NodesPage />);
    const panel = await screen.findByRole('region', { name: 'Cluster database' });
    await user.click(await within(panel).findByRole('button', { name: 'Switch over to lb2' }));
    expect(apiCalls.some((call) => call.method === 'POST')).toBe(false);
    await user.click(within(panel).getByRole('button', { name: 'Yes, switch over: the management VIP to lb2' }));
    expect(await within(panel).findByRole('alert')).toHaveTextContent('lb2 did not catch up within 30 s: nothing handed over');

    const detail = 'Switching over: lb2 takes the management VIP and the cluster database; this one follows it.';
    mockApi('POST', '/api/v1/cluster/switchover/', { status: 202, body: { standby: 'lb2', detail } });
    await user.click(within(panel).getByRole('button', { name: 'Switch over to lb2' }));
    await user.click(within(panel).getByRole('button', { name: 'Yes, switch over: the management VIP to lb2' }));
    expect(await within(panel).findByText(detail)).toBeInTheDocument();
    expect(apiCalls.filter((call) => call.method === 'POST' && call.path === '/api/v1/cluster/switchover/')).toHaveLength(2);
  });

  it('offers no switchover without a standby that confirms commits', async () => {
    const catching = { name: 'lb2', address: '192.0.2.12', state: 'catchup', sync_state: 'potential', lag_bytes: 9000, silent_s: 0.2, flushes: false };
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([]) });
    mockApi('GET', '/api/v1/cluster/replication/', { status: 200, body: { ...SINGLE, state: 'catching-up', standbys: [catching], slots: ['lb2'] } });
    renderWithProviders(<NodesPage />);
    const panel = await screen.findByRole('region', { name: 'Cluster database' });
    expect(await within(panel).findByText(/catching up/)).toBeInTheDocument();
    expect(within(panel).queryByRole('button', { name: /Switch over/ })).not.toBeInTheDocument();
  });

  describe('for other roles', () => {
    const SYNCING = { ...SYNC, enabled: true, interface: 'eth1', sync_id: 9, ha_group: 7 };
    const NODES = [haNode(1, 'lb1', 14, { address: '10.0.1.3' }), haNode(2, 'lb2', 14)];

    async function renderAs(role: 'viewer' | 'operator') {
      signedInAs(role);
      mockSync(SYNCING);
      mockApi('GET', '/api/v1/nodes/', { status: 200, body: page(NODES) });
      // A standby that confirms commits: an admin could switch over, these roles cannot.
      const lb2 = { name: 'lb2', address: '10.0.1.4', state: 'streaming', sync_state: 'sync', lag_bytes: 0, silent_s: 0.1, flushes: true };
      mockApi('GET', '/api/v1/cluster/replication/', { status: 200, body: { ...SINGLE, state: 'synchronous', standbys: [lb2], slots: ['lb2'] } });
      const rendered = renderWithProviders(<NodesPage />);
      await sessionLoaded(rendered.queryClient);
      await screen.findByText(/on two appliances before it is acknowledged/);
      return { ...rendered, table: await screen.findByRole('table', { name: 'Registered nodes' }) };
    }

    it('shows a viewer the nodes, addresses and sync settings with nothing to change', async () => {
      const { table } = await renderAs('viewer');
      expect(within(table).getByRole('row', { name: /^lb1/ })).toHaveTextContent('10.0.1.3');
      expect(within(table).getByRole('row', { name: /^lb2/ })).toHaveTextContent('none');
      expect(within(table).getAllByRole('columnheader')).toHaveLength(7);
      const sync = (await screen.findByText('Sync ID')).closest('dl');
      expect(sync).toHaveTextContent('Interfaceeth1');
      expect(sync).toHaveTextContent('HA groupfront (its master sends)');
      expect(screen.queryByRole('button')).not.toBeInTheDocument();
      expect(screen.queryByRole('textbox')).not.toBeInTheDocument();
      expect(screen.queryByRole('form')).not.toBeInTheDocument();
      expect(screen.queryByRole('heading', { name: 'Add a node' })).not.toBeInTheDocument();
      expect(screen.queryByRole('heading', { name: 'Add an appliance' })).not.toBeInTheDocument();
      expect(apiCalls.filter((c) => c.path === '/api/v1/join-codes/')).toHaveLength(0);
    });

    it('lets an operator set standby, but not add, delete or address nodes', async () => {
      const { table } = await renderAs('operator');
      expect(within(table).getByRole('button', { name: 'Hand over master roles of lb1' })).toBeInTheDocument();
      expect(within(table).getAllByRole('columnheader')).toHaveLength(8);
      expect(screen.queryByRole('button', { name: /^Delete/ })).not.toBeInTheDocument();
      expect(screen.queryByRole('textbox')).not.toBeInTheDocument();
      expect(screen.queryByRole('form')).not.toBeInTheDocument();
      expect(screen.getAllByRole('button')).toHaveLength(2);
    });
  });
});
