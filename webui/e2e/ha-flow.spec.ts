import { expect, type Page, test } from '@playwright/test';
import { removeHaLeftovers, signIn, snap, waitForNodeReport } from './support/console';
import { nodeName } from './support/env';

// High availability through the console against a real stack with one node: give the node
// its HA address, create an HA group on the lab's cl0 (a VRRPv3 advert off the 10 ms steps is
// refused before anything is sent), mirror it for active/active (the API refuses a VIP the
// first group already has, next to VIPs), have the IPVS connection sync follow the group,
// apply, wait for the node, then hand its master roles over and see the revision that
// carries it. The harness then checks what the node was sent.

const PREFIX = 'ha-e2e';
const GROUP = 'ha-e2e';
const MIRROR = 'ha-e2e-mirror';
const VRID = 60;
const VIP = '10.77.100.60';
const MIRROR_VIP = '10.77.100.61';
// The balancer namespace's side of the client network (tests/harness/lab.py).
const INTERFACE = 'cl0';
const ADDRESS = '10.77.1.1';

async function openHaPage(page: Page) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'High availability' }).click();
  await expect(page.getByRole('heading', { name: 'High availability', level: 1 })).toBeVisible();
}

async function openNodesPage(page: Page) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Nodes' }).click();
  await expect(page.getByRole('heading', { name: 'Registered nodes' })).toBeVisible();
}

test('HA: node address, a group with a refused value, its mirror, apply, hand over master roles', async ({ page }) => {
  const node = nodeName() ?? 'lb1';

  await test.step('sign in; remove what an earlier run left', async () => {
    await signIn(page);
    await removeHaLeftovers(page, PREFIX, node);
  });

  await test.step("set the node's HA address", async () => {
    await openNodesPage(page);
    // The stack's one PostgreSQL: a primary without a standby, as the real API reads it.
    await expect(page.getByRole('region', { name: 'Cluster database' })).toContainText('primary single One appliance: no standby');
    const address = page.getByLabel(`HA address of ${node}`, { exact: true });
    await address.fill(ADDRESS);
    await page.getByRole('button', { name: `Save HA address of ${node}` }).click();
    await expect(page.getByRole('row', { name: new RegExp(`^${node}`) }).getByText('Saved; apply to use it.')).toBeVisible();
  });

  await test.step('create an HA group: an advert off the 10 ms steps is refused before anything is sent', async () => {
    const posts: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().includes('/ha-groups/')) posts.push(request.url());
    });
    await openHaPage(page);
    await page.getByRole('button', { name: 'New HA group' }).click();
    const editor = page.getByRole('region', { name: 'New HA group' });
    await editor.getByLabel('Name', { exact: true }).fill(GROUP);
    await editor.getByLabel('VRID').fill(String(VRID));
    await editor.getByLabel('Interface', { exact: true }).fill(INTERFACE);
    await editor.getByLabel('VIPs').fill(VIP);
    const row = editor.getByRole('group', { name: 'Node 1' });
    await row.getByLabel('Node', { exact: true }).selectOption({ label: `${node} (${ADDRESS})` });
    await row.getByLabel('Priority').fill('150');
    const advert = editor.getByLabel('Advert interval (ms)');
    await advert.fill('205');
    await editor.getByRole('button', { name: 'Create HA group' }).click();
    await expect(advert).toHaveAttribute('aria-invalid', 'true');
    await expect(advert).toHaveAccessibleDescription(/205 ms: VRRPv3 counts in 10 ms steps, from 10 to 40950 ms/);
    await snap(page, '60-ha-advert-refused');
    expect(posts).toEqual([]);
    await advert.fill('200');
    await editor.getByRole('button', { name: 'Create HA group' }).click();
    await expect(page.getByText(`HA group ${GROUP} saved; apply to put it on the nodes.`)).toBeVisible();
  });

  await test.step('mirror it for active/active: the API refuses a VIP the first group has, next to VIPs', async () => {
    await page.getByRole('button', { name: `Mirror HA group ${GROUP}` }).click();
    const editor = page.getByRole('region', { name: `Mirror of ${GROUP}` });
    await expect(editor.getByLabel('Name', { exact: true })).toHaveValue(MIRROR);
    await expect(editor.getByLabel('VRID')).toHaveValue(String(VRID + 1));
    await expect(editor.getByLabel('Interface', { exact: true })).toHaveValue(INTERFACE);
    const vips = editor.getByLabel('VIPs');
    await expect(vips).toHaveValue('');
    await vips.fill(VIP);
    await editor.getByRole('button', { name: 'Create HA group' }).click();
    await expect(vips).toHaveAttribute('aria-invalid', 'true');
    await expect(vips).toHaveAccessibleDescription(new RegExp(`${VIP.replaceAll('.', '\\.')} is also in HA group ${GROUP}`));
    await expect(page.getByRole('alert')).toHaveCount(0);
    await snap(page, '61-ha-mirror-vip-refused');
    await vips.fill(MIRROR_VIP);
    await editor.getByRole('button', { name: 'Create HA group' }).click();
    await expect(page.getByText(`HA group ${MIRROR} saved; apply to put it on the nodes.`)).toBeVisible();
    const table = page.getByRole('table', { name: 'HA groups' });
    await expect(table.getByRole('rowheader', { name: GROUP, exact: false })).toHaveCount(2);
    await expect(table.getByRole('list', { name: `VIPs of ${MIRROR}` })).toHaveText(MIRROR_VIP);
  });

  await test.step('the IPVS connection sync follows the group (off: the lab has no IPVS)', async () => {
    await openNodesPage(page);
    const form = page.getByRole('form', { name: 'IPVS connection sync' });
    await form.getByLabel('Synchronise connections').uncheck();
    await form.getByLabel('Interface').fill(INTERFACE);
    await form.getByLabel('HA group').selectOption({ label: GROUP });
    await form.getByRole('button', { name: 'Save sync settings' }).click();
    await expect(page.getByText('Sync settings saved; apply to put them on the nodes.')).toBeVisible();
  });

  await test.step('apply and wait for the node; the history says the revision is live', async () => {
    await page.getByRole('link', { name: 'Apply & history' }).click();
    await page.getByLabel('Message').fill(`e2e: HA groups ${GROUP} and ${MIRROR} on ${INTERFACE}`);
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    const result = page.getByRole('region', { name: /^Revision \d+/ });
    const row = result.getByRole('row').filter({ has: page.getByRole('rowheader', { name: node, exact: true }) });
    await expect(row).toHaveAttribute('data-state', /^(applied|failed)$/, { timeout: 60_000 });
    expect(await row.getAttribute('data-state'), `node ${node} reported: ${await row.innerText()}`).toBe('applied');
    const history = page.getByRole('table', { name: 'Revision history' });
    const newest = history.getByRole('row').nth(1);
    await expect(newest).toContainText('on every node');
    await expect(newest).not.toContainText('not on every node');
    await snap(page, '62-ha-applied');
  });

  await test.step('the HA page shows each node of each group with its priority and state', async () => {
    await openHaPage(page);
    const nodes = page.getByRole('list', { name: `Nodes of ${GROUP}`, exact: true });
    await expect(nodes.getByRole('listitem')).toHaveText(new RegExp(`^${node} 150 `));
    await expect(page.getByRole('table', { name: 'HA groups' }).getByRole('list', { name: `Nodes of ${MIRROR}` })).toContainText(node);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await snap(page, `63-ha-${scheme}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  });

  await test.step('hand over master roles: confirmed, published as a revision, applied by the node', async () => {
    await openNodesPage(page);
    const row = page.getByRole('row', { name: new RegExp(`^${node}`) });
    await expect(row).toContainText('newest');
    await row.getByRole('button', { name: `Hand over master roles of ${node}` }).click();
    await snap(page, '64-ha-standby-confirm');
    await row.getByRole('button', { name: `Yes, hand over: node ${node}` }).click();
    const status = row.getByText(new RegExp(`^${node} hands over its master roles: revision \\d+\\.$`));
    await expect(status).toBeVisible();
    const number = Number(/revision (\d+)/.exec((await status.textContent()) ?? '')?.[1]);
    test.info().annotations.push({ type: 'standby revision', description: String(number) });
    const report = await waitForNodeReport(page, number, node);
    expect(report.state, `node ${node} reported: ${report.message}`).toBe('applied');
    await expect(row.getByRole('button', { name: `Take part again: ${node}` })).toBeVisible();
    await expect(row).toContainText('standby');
    await page.reload();
    await expect(page.getByRole('row', { name: new RegExp(`^${node}`) })).toContainText(`#${number} newest`, { timeout: 15_000 });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await snap(page, `65-ha-nodes-standby-${scheme}`);
    }
  });
});
