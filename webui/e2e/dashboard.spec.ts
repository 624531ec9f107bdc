import { expect, type Page, test } from '@playwright/test';
import { signIn, snap, waitForNodeReport } from './support/console';
import { members, nodeName } from './support/env';

// The dashboard, a service's page and a pool's members, live, against the real stack. The
// harness (tests/e2e/test_dashboard.py) creates dsh-pool and dsh-web, applies, keeps traffic
// flowing through the VIP and runs this spec twice:
//   DSH_PHASE=live  everything up: the dashboard shows dsh-web up with requests and graphs,
//                   its page shows every member up;
//   DSH_PHASE=down  the first server's nginx is stopped: the member is down with the check's
//                   reason and the service degraded; the second member is drained in one
//                   click on the pool's page (the harness then checks no traffic reaches it).

const SERVICE = 'dsh-web';
const POOL = 'dsh-pool';
const phase = process.env.DSH_PHASE ?? 'live';
// The agents report every 10 s and the console reads every 10 s: a change shows within ~30 s.
const LIVE = { timeout: 45_000 };

const tile = (page: Page) => page.getByRole('list', { name: 'Virtual services' }).getByRole('article', { name: SERVICE, exact: true });
const memberRow = (page: Page, name: string) => page.getByRole('table', { name: `Members of ${POOL}` }).getByRole('row', { name: new RegExp(`^${name}\\b`) });

async function openDashboard(page: Page) {
  await signIn(page);
  await page.goto('/');
  await expect(page.getByRole('heading', { level: 1, name: 'Dashboard' })).toBeVisible();
  await page.getByRole('searchbox', { name: 'Filter services' }).fill(SERVICE);
  await expect(tile(page)).toBeVisible();
}

test('live: the dashboard shows dsh-web up with traffic, its page every member up', async ({ page }) => {
  test.skip(phase !== 'live', 'phase live only');
  await test.step('dashboard: state, requests per second and their graph', async () => {
    await openDashboard(page);
    await expect(tile(page).getByText('up', { exact: true })).toBeVisible(LIVE);
    await expect(tile(page)).toContainText(`members up ${members().length}/${members().length}`);
    const requests = tile(page).locator('.figure').filter({ hasText: 'Requests/s' });
    await expect(requests.locator('.figure-value')).not.toHaveText(/^(0|–)$/, LIVE);
    const graph = tile(page).getByRole('figure', { name: /^Requests\/s of dsh-web, last hour/ });
    await expect(graph).toBeVisible();
    await expect(graph.locator('canvas')).toHaveCount(1);
    await expect(graph).toHaveAccessibleName(/now [1-9]|now 0\.[1-9]/);
    await expect(page.getByRole('table', { name: 'Nodes' }).getByRole('row', { name: new RegExp(nodeName() ?? 'lb1') })).toContainText(/online|standby/); // another file may have set it standby
    await snap(page, 'dsh-01-dashboard-live');
  });

  await test.step("the service's page: graphs and every member up", async () => {
    await tile(page).getByRole('link', { name: SERVICE }).click();
    await expect(page.getByRole('heading', { level: 1, name: `Virtual service ${SERVICE}` })).toBeVisible();
    const graph = page.getByRole('figure', { name: /^Requests and errors per second of dsh-web/ });
    await expect(graph.locator('canvas')).toHaveCount(1);
    await expect(page.getByRole('heading', { name: `Members of pool ${POOL}` })).toBeVisible();
    for (const member of members()) {
      await expect(memberRow(page, member.name).locator('.health .badge').first()).toHaveText('up', LIVE);
    }
    await expect(memberRow(page, members()[0]!.name)).toContainText('req/s', LIVE);
    await snap(page, 'dsh-02-service-live');
  });
});

test('down: a stopped server is down with its reason, the service degraded; drain another in one click', async ({ page }) => {
  test.skip(phase !== 'down', 'phase down only');
  const [stopped, drained] = members().map((m) => ({ name: m.name }));
  if (!stopped || !drained) throw new Error('FULCRUM_MEMBERS: this spec needs at least two members');

  await test.step('dashboard: the service is degraded', async () => {
    await openDashboard(page);
    await expect(tile(page).getByText('degraded', { exact: true })).toBeVisible(LIVE);
    await expect(tile(page)).toContainText(`members up ${members().length - 1}/${members().length}`);
    await snap(page, 'dsh-03-dashboard-degraded');
  });

  await test.step("the service's page: the member is down, with the check's reason", async () => {
    await tile(page).getByRole('link', { name: SERVICE }).click();
    const row = memberRow(page, stopped.name);
    await expect(row.locator('.health .badge').first()).toHaveText('down', LIVE);
    await expect(row.locator('.health-reason')).toContainText(/L4CON|Connection refused|L4TOUT|L7/);
    await snap(page, 'dsh-04-service-member-down');
  });

  await test.step("the pool's page: the history of the change, then drain another member in one click", async () => {
    await page.getByRole('link', { name: 'Open the pool' }).first().click();
    await expect(page.getByRole('heading', { level: 1, name: `Pool ${POOL}` })).toBeVisible();
    await memberRow(page, stopped.name).getByRole('button', { name: `History of ${stopped.name}` }).click();
    const history = page.getByRole('table', { name: `Health history of ${stopped.name}` });
    await expect(history.getByRole('row').nth(1)).toContainText('up → down');
    await page.getByRole('group', { name: `State of ${drained.name}` }).getByRole('button', { name: 'Drain' }).click();
    const done = page.getByRole('status').filter({ hasText: new RegExp(`^${drained.name} draining \\(revision \\d+\\)\\.$`) });
    await expect(done).toBeVisible();
    const revision = Number(/revision (\d+)/.exec((await done.textContent()) ?? '')?.[1]);
    const node = nodeName();
    if (node) expect((await waitForNodeReport(page, revision, node)).state).toBe('applied');
    await expect(page.getByRole('group', { name: `State of ${drained.name}` }).getByRole('button', { name: 'Drain' })).toHaveAttribute('aria-pressed', 'true');
    await expect(memberRow(page, drained.name).locator('.health .badge').first()).toHaveText(/draining|up/, LIVE);
    await snap(page, 'dsh-05-pool-drained');
  });
});
