import { expect, type Page, test } from '@playwright/test';
import { removeLayer7Leftovers, removeLeftovers, signIn, snap } from './support/console';
import { members } from './support/env';

// The guided new-service wizard against the real API: a web service with a new pool of the
// lab's members on 10.77.100.20, created step by step and applied (the harness then sends
// traffic through the VIP); a layer-4 NAT service up to Create (IPVS cannot be applied on
// this host: the harness checks what was stored, then deletes it); and an HTTPS run up to
// its certificate step and review, which creates nothing.

test.describe.configure({ mode: 'serial' });

const WEB = { name: 'wiz-web', vip: '10.77.100.20' };
const L4 = { name: 'wiz-l4', vip: '10.77.100.21', port: '8021' };
const HTTPS = { name: 'wiz-tls', vip: '10.77.100.22' };

async function openWizard(page: Page) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Virtual services' }).click();
  await page.getByRole('link', { name: 'New virtual service' }).first().click();
  await expect(page.getByRole('heading', { name: /^Step 1 of \d: Kind of service$/ })).toBeVisible();
}

async function next(page: Page, heading: RegExp) {
  await page.getByRole('button', { name: 'Next' }).click();
  const title = page.getByRole('heading', { name: heading });
  await expect(title).toBeVisible();
  await expect(title).toBeFocused();
}

async function fillListener(page: Page, values: { name: string; vip: string; port?: string }) {
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill(values.name);
  await page.getByRole('textbox', { name: 'VIP' }).fill(values.vip);
  if (values.port) await page.getByRole('spinbutton', { name: 'Port' }).fill(values.port);
}

async function fillMembers(page: Page, port?: number) {
  for (const [index, member] of members().entries()) {
    if (index > 0) await page.getByRole('button', { name: 'Add member' }).click();
    const row = page.getByRole('group', { name: `Member ${index + 1}` });
    await row.getByRole('textbox', { name: 'Member name' }).fill(member.name);
    await row.getByRole('textbox', { name: 'Address' }).fill(member.address);
    await row.getByRole('spinbutton', { name: 'Port' }).fill(String(port ?? member.port));
  }
}

test('web service with a new pool through the wizard, then applied', async ({ page }) => {
  await test.step('sign in; remove what an earlier run left', async () => {
    await signIn(page);
    await removeLeftovers(page, WEB.name);
  });

  await test.step('kind: web (HTTP)', async () => {
    await openWizard(page);
    await page.getByRole('radio', { name: /^Web \(HTTP, layer 7\)/ }).check();
    await snap(page, 'wiz-01-kind');
    await next(page, /^Step 2 of 4: Listener$/);
  });

  await test.step('listener: the VIP, port 80 by default; a bad VIP is caught before Next', async () => {
    await expect(page.getByRole('spinbutton', { name: 'Port' })).toHaveValue('80');
    await fillListener(page, { name: WEB.name, vip: '10.77.100.300' });
    await page.getByRole('button', { name: 'Next' }).click();
    await expect(page.getByRole('textbox', { name: 'VIP' })).toHaveAccessibleDescription(/valid IPv4 or IPv6 address/);
    await snap(page, 'wiz-02-listener-invalid');
    await page.getByRole('textbox', { name: 'VIP' }).fill(WEB.vip);
    await snap(page, 'wiz-02-listener');
    await next(page, /^Step 3 of 4: Pool and members$/);
  });

  await test.step('pool: the lab members, round robin, HTTP GET / expecting 200', async () => {
    await expect(page.getByRole('textbox', { name: 'Pool name' })).toHaveValue(WEB.name);
    await expect(page.getByRole('combobox', { name: 'Algorithm' })).toHaveValue('round-robin');
    await expect(page.getByRole('combobox', { name: 'Health check' })).toHaveValue('http');
    await expect(page.getByRole('textbox', { name: 'Path' })).toHaveValue('/');
    await fillMembers(page);
    await snap(page, 'wiz-03-pool');
    await next(page, /^Step 4 of 4: Review and create$/);
  });

  await test.step('review, Back keeps the values, create', async () => {
    const summary = page.getByLabel('Summary');
    await expect(summary).toContainText(`${WEB.vip}:80 HTTP`);
    for (const member of members()) await expect(summary).toContainText(`${member.name} ${member.address}:${member.port}`);
    await page.getByRole('button', { name: 'Back' }).click();
    await expect(page.getByRole('group', { name: `Member ${members().length}` }).getByRole('textbox', { name: 'Address' })).toHaveValue(members().at(-1)!.address);
    await next(page, /^Step 4 of 4: Review and create$/);
    await snap(page, 'wiz-04-review');
    await page.getByRole('button', { name: 'Create virtual service' }).click();
    await expect(page).toHaveURL(/\/services\/\d+$/);
    const notice = page.getByRole('status').filter({ hasText: `Virtual service ${WEB.name} created.` });
    await expect(notice).toContainText('pending until applied');
    await snap(page, 'wiz-05-created');
    await notice.getByRole('link', { name: 'Apply & history' }).click();
  });

  await test.step('apply on the Apply & history page and wait for the node', async () => {
    const form = page.getByRole('form', { name: 'Apply changes' });
    await form.getByRole('textbox', { name: 'Message' }).fill(`e2e: ${WEB.name} on ${WEB.vip}:80 from the wizard`);
    await form.getByRole('button', { name: 'Apply', exact: true }).click();
    await expect(page.getByText(/^Revision \d+ is applied on every node$/)).toBeVisible({ timeout: 60_000 });
    await snap(page, 'wiz-06-applied');
  });
});

test('layer-4 NAT service through the wizard up to Create', async ({ page }) => {
  await test.step('sign in; remove what an earlier run left', async () => {
    await signIn(page);
    await removeLeftovers(page, L4.name);
  });

  await test.step('kind and listener: NAT over TCP, no default port', async () => {
    await openWizard(page);
    await page.getByRole('radio', { name: /^TCP\/UDP/ }).check();
    await next(page, /^Step 2 of 4: Listener$/);
    await expect(page.getByRole('spinbutton', { name: 'Port' })).toHaveValue('');
    await fillListener(page, L4);
    await expect(page.getByRole('combobox', { name: 'Forwarding' })).toHaveValue('nat');
    await expect(page.getByRole('combobox', { name: 'Protocol' })).toHaveValue('tcp');
    await snap(page, 'wiz-10-l4-listener');
    await next(page, /^Step 3 of 4: Pool and members$/);
  });

  await test.step('pool: weighted least connections and a TCP check by default; one member on port 80', async () => {
    await expect(page.getByRole('combobox', { name: 'Algorithm' })).toHaveValue('least-connections');
    await expect(page.getByRole('combobox', { name: 'Health check' })).toHaveValue('tcp');
    const row = page.getByRole('group', { name: 'Member 1' });
    await expect(row.getByRole('spinbutton', { name: 'Port' })).toHaveValue(L4.port);
    const member = members()[0]!;
    await row.getByRole('textbox', { name: 'Member name' }).fill(member.name);
    await row.getByRole('textbox', { name: 'Address' }).fill(member.address);
    await row.getByRole('spinbutton', { name: 'Port' }).fill(String(member.port)); // NAT may change the port
    await snap(page, 'wiz-11-l4-pool');
    await next(page, /^Step 4 of 4: Review and create$/);
  });

  await test.step('review and create', async () => {
    await expect(page.getByLabel('Summary')).toContainText(`${L4.vip}:${L4.port} TCP, NAT (IPVS, layer 4)`);
    await snap(page, 'wiz-12-l4-review');
    await page.getByRole('button', { name: 'Create virtual service' }).click();
    await expect(page).toHaveURL(/\/services\/\d+$/);
    await expect(page.getByRole('status').filter({ hasText: `Virtual service ${L4.name} created.` })).toBeVisible();
  });
});

test('HTTPS: the certificate step, then review; nothing created', async ({ page }) => {
  await signIn(page);
  await removeLayer7Leftovers(page, { service: HTTPS.name, pool: HTTPS.name, certificate: HTTPS.name });
  await openWizard(page);
  await page.getByRole('radio', { name: /^Web over HTTPS/ }).check();
  await next(page, /^Step 2 of 5: Listener$/);
  await expect(page.getByRole('spinbutton', { name: 'Port' })).toHaveValue('443');
  await fillListener(page, HTTPS);
  await next(page, /^Step 3 of 5: Pool and members$/);
  await fillMembers(page);
  await next(page, /^Step 4 of 5: Certificate$/);
  await page.getByRole('radio', { name: 'Generate a self-signed certificate' }).check();
  await expect(page.getByRole('textbox', { name: 'Certificate name' })).toHaveValue(HTTPS.name);
  await page.getByRole('button', { name: 'Next' }).click();
  await expect(page.getByRole('textbox', { name: 'Common name' })).toHaveAccessibleDescription(/Enter the common name/);
  await page.getByRole('textbox', { name: 'Common name' }).fill('tls.example.test');
  await snap(page, 'wiz-20-https-certificate');
  await next(page, /^Step 5 of 5: Review and create$/);
  await expect(page.getByLabel('Summary')).toContainText(`${HTTPS.name}: self-signed for tls.example.test, generated now`);
  await snap(page, 'wiz-21-https-review');
  await page.getByRole('link', { name: 'Cancel' }).click();
  await expect(page).toHaveURL(/\/services$/);
});
