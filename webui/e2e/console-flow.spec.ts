import { expect, test } from '@playwright/test';
import { removeLeftovers, signIn, snap } from './support/console';
import { members, nodeName, vip } from './support/env';

// The operator's whole path through the console against a real stack: build a pool with a
// health check and members, put a virtual service in front of it, apply, and wait for the
// node agent to report. The harness then sends real traffic through the VIP.

const NAME = 'web';

test('sign in, build pool and virtual service, apply, node applies it', async ({ page }) => {
  const node = nodeName();

  await test.step('sign in', async () => {
    await page.goto('/');
    await expect(page).toHaveURL(/\/sign-in/);
    await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
    await snap(page, '01-sign-in');
    await page.emulateMedia({ colorScheme: 'dark' });
    await snap(page, '01-sign-in-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await signIn(page);
    await removeLeftovers(page, NAME);
  });

  await test.step('create pool web', async () => {
    await page.getByRole('link', { name: 'Pools' }).click();
    await page.getByRole('link', { name: 'New pool' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill(NAME);
    await page.getByLabel('Algorithm').selectOption('round-robin');
    await snap(page, '02-pool-new');
    await page.getByRole('button', { name: 'Create pool' }).click();
    await expect(page.getByRole('heading', { name: `Pool ${NAME}` })).toBeVisible();
  });

  await test.step('add an HTTP health check on /health', async () => {
    // The pool page has several timeouts (the pool's own below): stay within the panel.
    const check = page.getByRole('region', { name: 'Health check' });
    await check.getByRole('button', { name: 'Add health check' }).click();
    await check.getByLabel('Check type').selectOption('http');
    await check.getByLabel('Path').fill('/health');
    await check.getByLabel('Expected status').fill('200');
    await check.getByLabel('Interval (ms)').fill('1000');
    await check.getByLabel('Timeout (ms)').fill('500');
    await check.getByLabel('Rise').fill('1');
    await check.getByLabel('Fall').fill('2');
    await check.getByRole('button', { name: 'Create health check' }).click();
    await expect(check.getByRole('button', { name: 'Save health check' })).toBeVisible();
    await snap(page, '03-pool-health-check');
  });

  await test.step('add the members', async () => {
    const panel = page.getByRole('region', { name: 'Members' });
    const table = () => panel.getByRole('table', { name: `Members of ${NAME}` });
    for (const member of members()) {
      await panel.getByLabel('Member name').fill(member.name);
      await panel.getByLabel('Address').fill(member.address);
      await panel.getByLabel('Port', { exact: true }).fill(String(member.port));
      await panel.getByRole('button', { name: 'Add member' }).click();
      await expect(table().getByRole('rowheader', { name: member.name, exact: true })).toBeVisible();
    }
    await expect(table().getByRole('row')).toHaveCount(members().length + 1);
    await snap(page, '04-pool-detail');
  });

  await test.step('create virtual service web on the VIP, port 80, HTTP', async () => {
    await page.getByRole('link', { name: 'Virtual services' }).click();
    await page.getByRole('link', { name: 'New virtual service' }).first().click();
    await page.getByRole('link', { name: 'Use the full form instead' }).click();
    await page.getByLabel('Name', { exact: true }).fill(NAME);
    await page.getByLabel('VIP').fill(vip());
    await page.getByLabel('Port', { exact: true }).fill('80');
    await page.getByLabel('Protocol').selectOption('http');
    await page.getByLabel('Pool', { exact: true }).selectOption({ label: NAME });
    await snap(page, '05-service-new');
    await page.getByRole('button', { name: 'Create virtual service' }).click();
    await expect(page).toHaveURL(/\/services\/\d+$/); // the new service's page
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Virtual services' }).click();
    await expect(page.getByRole('table', { name: 'Virtual services' }).getByRole('rowheader', { name: NAME })).toBeVisible();
    await snap(page, '06-services');
  });

  await test.step('apply and wait for the node', async () => {
    await page.getByRole('link', { name: 'Apply & history' }).click();
    await page.getByLabel('Message').fill(`e2e: ${NAME} on ${vip()}:80`);
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    const result = page.getByRole('region', { name: /^Revision \d+/ });
    await expect(result).toBeVisible();
    await snap(page, '07-apply-pending');
    if (!node) {
      test.info().annotations.push({ type: 'note', description: 'FULCRUM_NODE unset: not waiting for a node.' });
      return;
    }
    const row = result.getByRole('row').filter({ has: page.getByRole('rowheader', { name: node, exact: true }) });
    await expect(row).toHaveAttribute('data-state', /^(applied|failed)$/, { timeout: 60_000 });
    await snap(page, '08-apply-result');
    const state = await row.getAttribute('data-state');
    expect(state, `node ${node} reported: ${await row.innerText()}`).toBe('applied');
  });

  await test.step('screenshots of each page, light and dark', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.getByRole('link', { name: 'Virtual services' }).click();
      await expect(page.getByRole('table', { name: 'Virtual services' })).toBeVisible();
      await snap(page, `10-services-${scheme}`);
      await page.getByRole('link', { name: 'Pools' }).click();
      // Wait for the pools page: the services page has a link named NAME too.
      await page.getByRole('table', { name: 'Pools' }).getByRole('link', { name: NAME, exact: true }).click();
      await expect(page.getByRole('heading', { name: `Pool ${NAME}` })).toBeVisible();
      await snap(page, `11-pool-detail-${scheme}`);
      await page.getByRole('link', { name: 'Apply & history' }).click();
      await expect(page.getByRole('table', { name: 'Revision history' })).toBeVisible();
      await snap(page, `12-revisions-${scheme}`);
      await page.getByRole('link', { name: 'Nodes' }).click();
      await expect(page.getByRole('heading', { name: 'Registered nodes' })).toBeVisible();
      await snap(page, `13-nodes-${scheme}`);
    }
  });
});
