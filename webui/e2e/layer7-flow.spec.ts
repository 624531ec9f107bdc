import { expect, type Page, test } from '@playwright/test';
import { apiAs, removeLayer7Leftovers, signIn, snap, waitForNodeReport } from './support/console';
import { members, nodeName, vip } from './support/env';

// Layer 7 through the console against a real stack: generate a certificate, put an HTTPS
// virtual service on it, add two content-switching rules and move the second above the
// first, apply, then drain a member at runtime (no apply) and wait for the node to make it.
// The harness can then send HTTPS through the VIP: GET /api/v1/… is redirected (the moved
// rule wins), other requests reach the pool's members except the drained one.

const CERTIFICATE = 'l7-cert';
const POOL = 'l7-web';
const SERVICE = 'l7-web';

type RuleSpec = {
  name: string;
  conditions: { kind: string; values: string }[];
  action: 'use_pool' | 'redirect';
  pool?: string;
  code?: string;
  location?: string;
};

async function addRule(page: Page, rule: RuleSpec) {
  const panel = page.getByRole('region', { name: 'Rules' });
  await panel.getByLabel('Rule name').fill(rule.name);
  for (const [index, condition] of rule.conditions.entries()) {
    if (index > 0) await panel.getByRole('button', { name: 'Add condition' }).click();
    const row = panel.getByRole('group', { name: `Condition ${index + 1}` });
    await row.getByRole('combobox', { name: 'Match' }).selectOption(condition.kind);
    await row.getByRole('textbox', { name: 'Values' }).fill(condition.values);
  }
  await panel.getByRole('combobox', { name: 'Then' }).selectOption(rule.action);
  if (rule.pool) await panel.getByRole('combobox', { name: 'Pool' }).selectOption({ label: rule.pool });
  if (rule.code) await panel.getByRole('combobox', { name: 'Redirect code' }).selectOption(rule.code);
  if (rule.location) await panel.getByRole('textbox', { name: 'Location' }).fill(rule.location);
  await panel.getByRole('button', { name: 'Add rule' }).click();
  await expect(panel.getByRole('table', { name: `Rules of ${SERVICE}` }).getByRole('rowheader', { name: rule.name, exact: true })).toBeVisible();
}

test('certificate, HTTPS service, rules reordered, apply, drain a member at runtime', async ({ page }) => {
  const node = nodeName();
  const api = apiAs(page);
  let serviceId = 0;

  await test.step('sign in; remove what an earlier run left', async () => {
    await signIn(page);
    await removeLayer7Leftovers(page, { service: SERVICE, pool: POOL, certificate: CERTIFICATE });
  });

  await test.step('generate a self-signed certificate', async () => {
    await page.getByRole('link', { name: 'Certificates' }).click();
    const form = page.getByRole('form', { name: 'Generate a self-signed certificate' });
    await form.getByLabel('Name', { exact: true }).fill(CERTIFICATE);
    await form.getByLabel('Common name').fill('l7.example.test');
    await form.getByLabel('Subject alternative names').fill('l7.example.test\nwww.l7.example.test');
    await form.getByLabel('Key type').selectOption('ecdsa-p256');
    await form.getByRole('button', { name: 'Generate certificate' }).click();
    await expect(page.getByText(`Certificate ${CERTIFICATE} stored.`)).toBeVisible();
    const row = page.getByRole('table', { name: 'Certificates' }).getByRole('row').filter({ has: page.getByRole('rowheader', { name: CERTIFICATE, exact: true }) });
    await expect(row).toContainText('l7.example.test, www.l7.example.test');
    await expect(row).toContainText(/in 36[45] days/);
    await expect(row).toContainText('ECDSA P-256');
    await snap(page, '40-certificates');
  });

  await test.step('create the pool with cookie persistence; members and check through the API', async () => {
    await page.getByRole('link', { name: 'Pools' }).click();
    await page.getByRole('link', { name: 'New pool' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill(POOL);
    await page.getByRole('combobox', { name: 'Persistence' }).selectOption('cookie_insert');
    await page.getByRole('textbox', { name: 'Cookie name' }).fill('L7SRV');
    await snap(page, '41-pool-new-persistence');
    await page.getByRole('button', { name: 'Create pool' }).click();
    await expect(page.getByRole('heading', { name: `Pool ${POOL}` })).toBeVisible();
    const poolId = Number(new URL(page.url()).pathname.split('/').pop());
    await api.create('health-checks/', { pool: poolId, type: 'http', path: '/health', interval_ms: 1000, timeout_ms: 500, rise: 1, fall: 2 });
    for (const member of members()) await api.create('members/', { pool: poolId, ...member });
    // Made behind the console's back: reload, or the pool page shows its cached copy for a few seconds.
    await page.reload();
    for (const member of members()) await expect(page.getByRole('group', { name: `State of ${member.name}` })).toBeVisible();
  });

  await test.step('create the HTTPS virtual service with the certificate', async () => {
    await page.getByRole('link', { name: 'Virtual services' }).click();
    await page.getByRole('link', { name: 'New virtual service' }).first().click();
    await page.getByRole('link', { name: 'Use the full form instead' }).click();
    await page.getByLabel('Name', { exact: true }).fill(SERVICE);
    await page.getByLabel('VIP').fill(vip());
    await page.getByRole('combobox', { name: 'Protocol' }).selectOption('https');
    await expect(page.getByLabel('Port', { exact: true })).toHaveValue('443');
    await page.getByRole('combobox', { name: 'Pool', exact: true }).selectOption({ label: POOL });
    const tls = page.getByRole('group', { name: 'TLS' });
    await tls.getByRole('combobox', { name: 'Certificate', exact: true }).selectOption({ label: CERTIFICATE });
    await tls.getByLabel('HSTS max age (s)').fill('3600');
    await snap(page, '42-service-https-new');
    await page.getByRole('button', { name: 'Create virtual service' }).click();
    await expect(page).toHaveURL(/\/services\/\d+$/); // the new service's page
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Virtual services' }).click();
    const row = page.getByRole('table', { name: 'Virtual services' }).getByRole('row').filter({ has: page.getByRole('rowheader', { name: SERVICE }) });
    await expect(row).toContainText('HTTPS');
    await row.getByRole('rowheader').getByRole('link', { name: SERVICE, exact: true }).click();
    await expect(page.getByRole('heading', { name: `Virtual service ${SERVICE}` })).toBeVisible();
    serviceId = Number(new URL(page.url()).pathname.split('/').pop());
    await page.getByRole('link', { name: 'Edit', exact: true }).first().click(); // rules are edited with the service
    await expect(page.getByRole('heading', { name: `Edit virtual service ${SERVICE}` })).toBeVisible();
  });

  await test.step('add two rules, then move the second above the first', async () => {
    await addRule(page, {
      name: 'api-reads',
      conditions: [
        { kind: 'path_prefix', values: '/api' },
        { kind: 'method', values: 'GET\nHEAD' },
      ],
      action: 'use_pool',
      pool: POOL,
    });
    // Overlaps the first rule: only once it is moved above does /api/v1 get redirected.
    await addRule(page, {
      name: 'legacy',
      conditions: [{ kind: 'path_prefix', values: '/api/v1' }],
      action: 'redirect',
      code: '301',
      location: '/api/v2',
    });
    const table = page.getByRole('table', { name: `Rules of ${SERVICE}` });
    await expect(table.getByRole('rowheader')).toHaveText(['api-reads', 'legacy']);
    await expect(table.getByRole('row', { name: /api-reads/ })).toContainText('path starts with /api AND method is GET or HEAD');
    await snap(page, '43-rules-added');

    await table.getByRole('button', { name: 'Move rule legacy up' }).click();
    await expect(table.getByRole('rowheader')).toHaveText(['legacy', 'api-reads']);
    const stored = await api.list<{ name: string; position: number }>(`rules/?virtual_service=${serviceId}`);
    expect(stored.map((r) => [r.name, r.position]).sort((a, b) => Number(a[1]) - Number(b[1]))).toEqual([
      ['legacy', 0],
      ['api-reads', 1],
    ]);
    await snap(page, '44-rules-reordered');
  });

  await test.step('apply and wait for the node', async () => {
    await page.getByRole('link', { name: 'Apply & history' }).click();
    await page.getByLabel('Message').fill(`e2e: ${SERVICE} on ${vip()}:443 with two rules`);
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    const result = page.getByRole('region', { name: /^Revision \d+/ });
    await expect(result).toBeVisible();
    if (!node) {
      test.info().annotations.push({ type: 'note', description: 'FULCRUM_NODE unset: not waiting for a node.' });
      return;
    }
    const row = result.getByRole('row').filter({ has: page.getByRole('rowheader', { name: node, exact: true }) });
    await expect(row).toHaveAttribute('data-state', /^(applied|failed)$/, { timeout: 60_000 });
    await snap(page, '45-layer7-apply-result');
    expect(await row.getAttribute('data-state'), `node ${node} reported: ${await row.innerText()}`).toBe('applied');
  });

  await test.step('drain a member at runtime, without applying', async () => {
    const member = members()[0]!;
    await page.getByRole('link', { name: 'Pools' }).click();
    await page.getByRole('table', { name: 'Pools' }).getByRole('link', { name: POOL, exact: true }).click();
    const buttons = page.getByRole('group', { name: `State of ${member.name}` });
    await buttons.getByRole('button', { name: 'Drain' }).click();
    const done = page.getByRole('status').filter({ hasText: new RegExp(`^${member.name} draining \\(revision \\d+\\)\\.$`) });
    await expect(done).toBeVisible();
    await expect(buttons.getByRole('button', { name: 'Drain' })).toHaveAttribute('aria-pressed', 'true');
    await snap(page, '46-pool-runtime-drain');
    const revision = Number(/revision (\d+)/.exec(await done.innerText())![1]);
    if (node) {
      const report = await waitForNodeReport(page, revision, node);
      expect(report.state, `node ${node} reported: ${report.message}`).toBe('applied');
    }
  });

  await test.step('screenshots of the new pages, light and dark', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.getByRole('link', { name: 'Certificates' }).click();
      await expect(page.getByRole('table', { name: 'Certificates' })).toBeVisible();
      await snap(page, `47-certificates-${scheme}`);
      await page.goto(`/services/${serviceId}/edit`);
      await expect(page.getByRole('table', { name: `Rules of ${SERVICE}` })).toBeVisible();
      await snap(page, `48-service-https-${scheme}`);
    }
  });
});
