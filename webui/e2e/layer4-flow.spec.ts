import { expect, type Page, test } from '@playwright/test';
import { apiAs, removeLeftovers, signIn, snap } from './support/console';
import { members } from './support/env';

// Layer 4 (IPVS through keepalived) through the console against a real stack: a pool with
// an IPVS scheduler and a member, a NAT TCP virtual service on it (the form offers TCP/UDP
// and a port range, and hides HAProxy's sections), seen in the list; switching it to direct
// routing is refused by the API because the member listens on another port, and the refusal
// is shown next to Forwarding; the IPVS connection sync settings are saved on the Nodes page.
// Nothing is applied: the harness checks what was stored.

const NAME = 'l4-nat';
const VIP = '10.77.100.40';
const PORT = 8040; // the members listen on 80: fine for NAT, not for direct routing

async function openPool(page: Page) {
  await page.getByRole('link', { name: 'Pools' }).click();
  await page.getByRole('table', { name: 'Pools' }).getByRole('link', { name: NAME, exact: true }).click();
  await expect(page.getByRole('heading', { name: `Pool ${NAME}` })).toBeVisible();
}

test('IPVS pool and member, NAT service, a refused direct routing, sync settings', async ({ page }) => {
  const member = members()[0]!;
  let serviceId = 0;

  await test.step('sign in; remove what an earlier run left', async () => {
    await signIn(page);
    await removeLeftovers(page, NAME);
  });

  await test.step('create a pool with a layer-4 scheduler and source persistence', async () => {
    await page.getByRole('link', { name: 'Pools' }).click();
    await page.getByRole('link', { name: 'New pool' }).first().click();
    await page.getByLabel('Name', { exact: true }).fill(NAME);
    const algorithm = page.getByRole('combobox', { name: 'Algorithm' });
    await expect(algorithm.locator('optgroup[label="Layer 4 (IPVS) only"] > option')).toHaveCount(4);
    // DLLC works on both layers: the kernel module for IPVS, agent-check weights for HAProxy.
    await expect(algorithm.locator('optgroup[label="Any layer"] > option[value="dynamic-least-load"]')).toHaveCount(1);
    await algorithm.selectOption('dynamic-least-load');
    await expect(page.getByRole('group', { name: 'Load feedback (DLLC)' })).toBeVisible();
    await algorithm.selectOption('shortest-expected-delay');
    await expect(page.getByRole('group', { name: 'Load feedback (DLLC)' })).toHaveCount(0);
    await page.getByRole('combobox', { name: 'Persistence' }).selectOption('source');
    await page.getByLabel('IPv4 mask').fill('24');
    await page.getByRole('combobox', { name: 'When a health check fails (layer 4)' }).selectOption('quiesce');
    await snap(page, '50-l4-pool-new');
    await page.getByRole('button', { name: 'Create pool' }).click();
    await expect(page.getByRole('heading', { name: `Pool ${NAME}` })).toBeVisible();
  });

  await test.step('add a member', async () => {
    const panel = page.getByRole('region', { name: 'Members' });
    await panel.getByLabel('Member name').fill(member.name);
    await panel.getByLabel('Address').fill(member.address);
    await panel.getByLabel('Port', { exact: true }).fill(String(member.port));
    await panel.getByRole('button', { name: 'Add member' }).click();
    await expect(panel.getByRole('table', { name: `Members of ${NAME}` }).getByRole('rowheader', { name: member.name, exact: true })).toBeVisible();
  });

  await test.step('create a NAT TCP service: TCP/UDP and a port range offered, HAProxy sections gone', async () => {
    await page.getByRole('link', { name: 'Virtual services' }).click();
    await page.getByRole('link', { name: 'New virtual service' }).first().click();
    await page.getByRole('link', { name: 'Use the full form instead' }).click();
    await page.getByLabel('Name', { exact: true }).fill(NAME);
    await page.getByLabel('VIP').fill(VIP);
    const forwarding = page.getByRole('combobox', { name: 'Forwarding' });
    await forwarding.selectOption('nat');
    await expect(forwarding).toHaveAccessibleDescription(/default gateway must be the balancer/);
    const protocol = page.getByRole('combobox', { name: 'Protocol' });
    await expect(protocol.getByRole('option')).toHaveText(['TCP', 'UDP']);
    await expect(protocol).toHaveValue('tcp');
    for (const section of ['TLS', 'Protection', 'Timeouts', 'Error pages']) {
      await expect(page.getByRole('group', { name: section })).toHaveCount(0);
    }
    await expect(page.getByLabel('Last port')).toHaveValue('0');
    await page.getByLabel('Port', { exact: true }).fill(String(PORT));
    await page.getByLabel('Pool', { exact: true }).selectOption({ label: NAME });
    await snap(page, '51-l4-service-new');
    await page.getByRole('button', { name: 'Create virtual service' }).click();
    await expect(page).toHaveURL(/\/services\/\d+$/); // the new service's page
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Virtual services' }).click();
  });

  await test.step('see it listed as NAT', async () => {
    const row = page.getByRole('table', { name: 'Virtual services' }).getByRole('row').filter({ has: page.getByRole('rowheader', { name: NAME }) });
    await expect(row).toContainText(`${VIP}:${PORT}`);
    await expect(row).toContainText('TCP');
    await expect(row).toContainText('NAT (IPVS, layer 4)');
    await snap(page, '52-l4-services');
    await row.getByRole('rowheader').getByRole('link', { name: NAME, exact: true }).click();
    await expect(page.getByRole('heading', { name: `Virtual service ${NAME}` })).toBeVisible();
    serviceId = Number(new URL(page.url()).pathname.split('/').pop());
    await page.getByRole('link', { name: 'Edit', exact: true }).first().click();
    await expect(page.getByRole('heading', { name: `Edit virtual service ${NAME}` })).toBeVisible();
    await expect(page.getByRole('region', { name: 'Rules' })).toHaveCount(0);
  });

  await test.step('direct routing with the member on another port: the refusal is next to Forwarding', async () => {
    const forwarding = page.getByRole('combobox', { name: 'Forwarding' });
    await forwarding.selectOption('direct-routing');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect(forwarding).toHaveAttribute('aria-invalid', 'true');
    await expect(forwarding).toHaveAccessibleDescription(
      new RegExp(`member ${member.name} / port: direct-routing cannot change the port: use ${PORT}`),
    );
    await expect(page.getByRole('alert')).toHaveCount(0);
    await snap(page, '53-l4-service-dr-refused');
    const stored = (await apiAs(page).list<{ id: number; forwarding: string }>('virtual-services/')).find((s) => s.id === serviceId);
    expect(stored?.forwarding).toBe('nat');
  });

  await test.step('the pool page knows it is layer 4: keepalived checks, IPVS member settings', async () => {
    await openPool(page);
    await expect(page.getByText(/^Layer 4 \(IPVS\): its services forward/)).toBeVisible();
    const check = page.getByRole('region', { name: 'Health check' });
    await check.getByRole('button', { name: 'Add health check' }).click();
    const type = check.getByRole('combobox', { name: 'Check type' });
    await expect(type.getByRole('option', { name: /Agent/ })).toHaveCount(0);
    await type.selectOption('tcp');
    await check.getByLabel('Rise').fill('1');
    await check.getByRole('button', { name: 'Create health check' }).click();
    await expect(check.getByRole('button', { name: 'Save health check' })).toBeVisible();
    const members = page.getByRole('region', { name: 'Members' });
    await expect(members.getByLabel('Min connections')).toBeVisible();
    await expect(members.getByLabel('Max queue')).toHaveCount(0);
    await snap(page, '54-l4-pool-detail');
  });

  await test.step('save the IPVS connection sync settings', async () => {
    await page.getByRole('link', { name: 'Nodes' }).click();
    const form = page.getByRole('form', { name: 'IPVS connection sync' });
    await form.getByLabel('Synchronise connections').check();
    await form.getByLabel('Interface').fill('eth1');
    await form.getByLabel('Sync ID').fill('42');
    await form.getByLabel('Multicast group').fill('239.0.0.81');
    await form.getByRole('button', { name: 'Save sync settings' }).click();
    await expect(page.getByText('Sync settings saved; apply to put them on the nodes.')).toBeVisible();
    await page.reload();
    await expect(form.getByLabel('Interface')).toHaveValue('eth1');
    await expect(form.getByLabel('Sync ID')).toHaveValue('42');
    await expect(form.getByLabel('Synchronise connections')).toBeChecked();
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await snap(page, `55-nodes-ipvs-sync-${scheme}`);
    }
  });
});
