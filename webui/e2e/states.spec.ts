import { expect, type Page, test } from '@playwright/test';
import { snap } from './support/console';

// States a healthy stack rarely shows (a refused apply, a failed node, a pool still in use,
// a token shown once), rendered by the real console with the API answers stubbed in the
// browser. Nothing reaches the stack's API, so this is safe next to console-flow.

const at = new Date().toISOString();
const user = { id: 1, username: 'admin', is_superuser: true, role: 'admin' };
const nothingPending = { pending: false, base_revision: null, objects: [] };
const pool = {
  id: 3,
  name: 'web',
  algorithm: 'least-connections',
  description: 'front-end servers',
  health_check: null,
  members: [
    { id: 11, pool: 3, name: 's1', address: '10.77.2.11', port: 80, weight: 10, state: 'enabled' },
    { id: 12, pool: 3, name: 's2', address: '10.77.2.12', port: 80, weight: 10, state: 'drain' },
    { id: 13, pool: 3, name: 's3', address: '10.77.2.13', port: 80, weight: 0, state: 'disabled' },
  ],
};
const list = (results: unknown[]) => ({ count: results.length, next: null, previous: null, results });

async function stubApi(page: Page, answers: Record<string, { status: number; body?: unknown }>) {
  await page.route('**/api/v1/**', async (route) => {
    const request = route.request();
    const path = new URL(request.url()).pathname.replace(/^\/api\/v1\//, '');
    const fallback: Record<string, unknown> = { 'auth/me/': user, 'revisions/pending/': nothingPending };
    const answer =
      answers[`${request.method()} ${path}`] ?? (path in fallback ? { status: 200, body: fallback[path] } : undefined);
    if (!answer) return route.fulfill({ status: 500, json: { detail: `not stubbed: ${request.method()} ${path}` } });
    return route.fulfill({ status: answer.status, json: answer.body ?? {} });
  });
}

test('a refused apply lists the problems per object', async ({ page }) => {
  const said =
    "ALERT: config : parsing [<check>/haproxy.cfg:57] : http-error : file '<check>/haproxy.d/pool-web.maintenance.html' exceeds the buffer size (20000 > 16384)";
  await stubApi(page, {
    'GET revisions/': { status: 200, body: list([]) },
    'POST revisions/': {
      status: 400,
      body: {
        detail: 'Not published.',
        problems: [
          { path: 'virtual-services/web/default_pool', message: "pool 'gone' does not exist", object: 'virtual-service', name: 'web', id: 1, field: 'default_pool', daemon: null, node: null, daemon_message: null },
          { path: 'pools/web/maintenance_page', message: `haproxy rejected the configuration: ${said}`, object: 'pool', name: 'web', id: 1, field: 'maintenance_page', daemon: 'haproxy', node: 'lb1', daemon_message: said },
        ],
        daemon_output: `${said}\nALERT: config : Error(s) found in configuration file : <check>/haproxy.cfg\nALERT: config : Fatal errors found in configuration.`,
      },
    },
  });
  await page.goto('/revisions');
  await page.getByRole('button', { name: 'Apply', exact: true }).click();
  await expect(page.getByRole('alert')).toContainText('Not applied');
  await expect(page.getByRole('alert').getByRole('link', { name: 'Pool web' })).toHaveAttribute('href', '/pools/1');
  await snap(page, '30-apply-refused');
});

test('a node that failed shows its message', async ({ page }) => {
  const bindSaid = 'bind 10.77.100.10:80: bind: address already in use';
  const revision = {
    id: 9,
    number: 12,
    message: 'drain s2',
    author: 'admin',
    created_at: at,
    live: false,
    rollback_of: null,
    confirm_state: 'none',
    confirm_by: null,
    confirm_problem: '',
    nodes: [
      { node: 'lb1', state: 'applied', message: '', problems: [], running_revision: 12, updated_at: at },
      {
        node: 'lb2',
        state: 'failed',
        message: `haproxy rejected the configuration:\n${bindSaid}\n(tried on the node before reloading: nothing was reloaded, the running configuration keeps serving)`,
        problems: [
          { path: 'virtual-services/web/vip', message: `haproxy rejected the configuration: ${bindSaid}`, object: 'virtual-service', name: 'web', id: 1, field: 'vip', daemon: 'haproxy', node: 'lb2', daemon_message: bindSaid },
        ],
        running_revision: 11,
        updated_at: at,
      },
      { node: 'lb3', state: 'pending', message: '', problems: [], running_revision: 11, updated_at: at },
    ],
  };
  await stubApi(page, {
    'GET revisions/': { status: 200, body: list([revision]) },
    'POST revisions/': { status: 201, body: revision },
    'GET revisions/9/': { status: 200, body: revision },
  });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto('/revisions');
    await page.getByLabel('Message').fill('drain s2');
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await expect(page.getByRole('region', { name: /Revision 12/ }).getByRole('row', { name: /^lb2/ })).toContainText('haproxy on lb2 said');
    await snap(page, `31-apply-node-failed-${scheme}`);
  }
});

test('a new node shows its token once', async ({ page }) => {
  await stubApi(page, {
    'GET nodes/': { status: 200, body: list([{ id: 1, name: 'lb1', last_seen: at, applied_revision: 12 }]) },
    'GET ipvs-sync/': { status: 200, body: { enabled: false, interface: 'eth0', sync_id: 0, port: 8848, ttl: 1, max_packet: 0, group: null } },
    'GET ha-groups/': { status: 200, body: list([]) },
    'GET revisions/': { status: 200, body: list([]) },
    'POST nodes/': { status: 201, body: { id: 2, name: 'lb2', last_seen: null, applied_revision: 0, token: 'q4X9v0d2Jr8mZ1kT7sWcN5yH3pLbE6aF0uGiRoVxYz' } },
  });
  await page.goto('/nodes');
  await page.getByLabel('Node name').fill('lb2');
  await page.getByRole('button', { name: 'Add node' }).click();
  await expect(page.getByLabel('Agent token for lb2')).toBeVisible();
  await snap(page, '32-node-token');
});

test('deleting a pool in use says what uses it', async ({ page }) => {
  await stubApi(page, {
    'GET pools/3/': { status: 200, body: pool },
    'GET certificates/': { status: 200, body: list([]) },
    'GET virtual-services/': { status: 200, body: list([{ id: 1, name: 'web', vip: '10.77.100.10', port: 80, protocol: 'http', forwarding: 'proxy', default_pool: 3, warnings: [] }]) },
    'DELETE pools/3/': { status: 409, body: { detail: 'still in use by: web' } },
  });
  await page.goto('/pools/3');
  await page.getByRole('button', { name: 'Delete pool web' }).click();
  await page.getByRole('button', { name: 'Yes, delete: pool web' }).click();
  await expect(page.getByRole('alert')).toContainText('still in use by: web');
  await snap(page, '33-pool-in-use');
});

test('the empty console invites the first steps', async ({ page }) => {
  await stubApi(page, {
    'GET virtual-services/': { status: 200, body: list([]) },
    'GET pools/': { status: 200, body: list([]) },
  });
  await page.goto('/services');
  await expect(page.getByText('No virtual services yet')).toBeVisible();
  await snap(page, '34-services-empty');
});

test('a runtime change before the member is applied says to apply first', async ({ page }) => {
  await stubApi(page, {
    'GET pools/3/': { status: 200, body: pool },
    'GET certificates/': { status: 200, body: list([]) },
    'GET virtual-services/': { status: 200, body: list([]) },
    'POST members/13/runtime/': {
      status: 409,
      body: {
        detail: 'Not changed.',
        problems: [{ path: 'pools/web/members/s3', message: 'not in the live configuration yet; apply the pending changes first' }],
      },
    },
  });
  await page.goto('/pools/3');
  await page.getByRole('group', { name: 'State of s3' }).getByRole('button', { name: 'Enable' }).click();
  await expect(page.getByRole('alert')).toContainText('apply the pending changes first');
  await snap(page, '35-runtime-not-live');
});

test('a certificate close to expiry is flagged, and one in use is not deleted', async ({ page }) => {
  const cert = (id: number, name: string, days: number, warnings: string[] = []) => ({
    id, name, description: '', certificate: '', chain: '', has_key: true, key_type: 'rsa-2048', subject: `CN=${name}.example.com`,
    issuer: `CN=${name}.example.com`, sans: [`${name}.example.com`], not_before: at, not_after: at, expires_in_days: days,
    fingerprint: 'ab', is_ca: false, warnings, created: at, updated: at,
  });
  await stubApi(page, {
    'GET certificates/': { status: 200, body: list([cert(1, 'www', 300), cert(2, 'shop', 9, ['expires in 9 days', 'self-signed'])]) },
    'DELETE certificates/2/': { status: 409, body: { detail: 'still in use by: virtual-services/shop' } },
  });
  await page.goto('/certificates');
  await page.getByRole('button', { name: 'Delete certificate shop' }).click();
  await page.getByRole('button', { name: 'Yes, delete: certificate shop' }).click();
  await expect(page.getByRole('alert')).toContainText('still in use by: virtual-services/shop');
  await snap(page, '36-certificate-in-use');
});

test('layer-4 warnings and a scheduler the kernel lacks are spelled out', async ({ page }) => {
  const warnings = [
    'member l4/rs2 (10.0.3.2) is on no network of node lb1: NAT works only when its replies are routed back through the balancer (its gateway must be the balancer).',
    'node lb1 runs scheduler wlc instead of dllc: kernel has no dllc scheduler',
  ];
  const nat = { id: 5, name: 'nat', vip: '10.77.100.40', port: 8000, port_end: 8099, protocol: 'tcp', forwarding: 'nat', default_pool: 3, enabled: true, warnings };
  const node = {
    id: 1, name: 'lb1', last_seen: at, applied_revision: 12, status_at: at, networks: ['10.77.1.2/24', '10.77.2.1/24'],
    ipvs_status: [{ key: 'tcp fwmark 1', name: 'nat', scheduler_wanted: 'dllc', scheduler_in_force: 'wlc', message: 'kernel has no dllc scheduler' }],
  };
  await stubApi(page, {
    'GET virtual-services/': { status: 200, body: list([nat]) },
    'GET pools/': { status: 200, body: list([{ ...pool, name: 'l4', algorithm: 'dynamic-least-load' }]) },
    'GET nodes/': { status: 200, body: list([node]) },
    'GET ipvs-sync/': { status: 200, body: { enabled: true, interface: 'eth1', sync_id: 9, port: 8848, ttl: 1, max_packet: 0, group: null } },
    'GET ha-groups/': { status: 200, body: list([]) },
    'GET revisions/': { status: 200, body: list([]) },
  });
  await page.goto('/services');
  await expect(page.getByRole('status', { name: 'Warnings for nat' }).getByRole('listitem')).toHaveText(warnings);
  await snap(page, '37-services-l4-warnings');
  await page.goto('/nodes');
  await expect(page.getByRole('list', { name: 'IPVS schedulers on lb1' })).toContainText('nat: wants dllc, runs wlc');
  await snap(page, '38-nodes-scheduler-differs');
});

test('the HA page shows each node\'s state, a node behind, and the role changes', async ({ page }) => {
  const since = new Date(Date.now() - 90_000).toISOString();
  const nodes = [
    { id: 1, name: 'lb1', address: '10.0.1.3', standby: true, last_seen: at, applied_revision: 14, status_at: at, networks: [], ipvs_status: [],
      vrrp: [{ group: 'front-a', state: 'fault', priority: 0, since }, { group: 'front-b', state: 'fault', priority: 0, since }] },
    { id: 2, name: 'lb2', address: '10.0.1.4', standby: false, last_seen: at, applied_revision: 12, status_at: at, networks: [], ipvs_status: [],
      vrrp: [{ group: 'front-a', state: 'master', priority: 100, since }, { group: 'front-b', state: 'master', priority: 150, since }] },
  ];
  const group = (id: number, name: string, vrid: number, vips: string[], priorities: [number, number]) => ({
    id, name, vrid, vips, interface: 'eth1', version: 3, advert_interval_ms: 200, preempt: true, preempt_delay_s: 5, authentication: false,
    track_haproxy: true, track_interfaces: ['eth0'], witness: '10.0.1.1', garp_refresh_s: 60, garp_repeat: 3,
    nodes: [{ node: 1, priority: priorities[0], interface: '' }, { node: 2, priority: priorities[1], interface: 'ens3' }],
  });
  const event = (id: number, node: string, group: string, old_state: string, new_state: string, priority: number, reason: string) => ({
    id, node, group, at: since, old_state, new_state, priority, reason, received_at: since,
  });
  await stubApi(page, {
    'GET nodes/': { status: 200, body: list(nodes) },
    'GET ha-groups/': { status: 200, body: list([group(1, 'front-a', 51, ['10.77.100.10', '10.77.100.11'], [150, 100]), group(2, 'front-b', 52, ['10.77.100.20'], [100, 150])]) },
    'GET ha-events/': {
      status: 200,
      body: list([
        event(4, 'lb2', 'front-a', 'backup', 'master', 100, 'lb1 sent priority 0 (standby)'),
        event(3, 'lb1', 'front-a', 'master', 'fault', 0, 'track file standby: 1'),
        event(2, 'lb1', 'front-b', 'backup', 'fault', 0, 'track file standby: 1'),
        event(1, 'lb2', 'front-b', 'backup', 'master', 150, 'higher priority (preempt after 5 s)'),
      ]),
    },
    'GET ipvs-sync/': { status: 200, body: { enabled: true, interface: 'eth1', sync_id: 9, port: 8848, ttl: 1, max_packet: 0, group: null, ha_group: 1 } },
    'GET revisions/': { status: 200, body: list([{ id: 14, number: 14, message: 'runtime: node lb1 standby', author: 'admin', created_at: at, nodes: [], live: false, rollback_of: null, confirm_state: 'none', confirm_by: null, confirm_problem: '' }]) },
  });
  await page.goto('/ha');
  await expect(page.getByRole('list', { name: 'Nodes of front-a' }).getByRole('listitem').first()).toHaveText(/lb1 150 fault standby/);
  await expect(page.getByRole('table', { name: 'Role changes, newest first' }).getByRole('row')).toHaveCount(5);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await snap(page, `39-ha-states-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto('/nodes');
  await expect(page.getByText('Newest revision #14: lb2 runs #12.')).toBeVisible();
  await snap(page, '40-nodes-ha-behind');
});
