import { expect, type Page, test } from '@playwright/test';
import { apiAs, signIn, snap } from './support/console';
import { vip } from './support/env';

// The server's refusals land on the field they concern, and a refused form creates nothing.
// Runs against the same kind of stack as console-flow; it makes its own objects on a port of
// its own and removes them afterwards.

test.describe.configure({ mode: 'serial' });

type Named = { id: number; name: string };

const suffix = `${Date.now() % 100000}`;
const POOL = `val-pool-${suffix}`;
const SERVICE = `val-svc-${suffix}`;
const PORT = 20000 + (Date.now() % 10000);

let page: Page;
let poolId: number;
let serviceId: number;

async function serviceNames(): Promise<string[]> {
  return (await apiAs(page).list<Named>('virtual-services/')).map((s) => s.name);
}

async function fillService(values: { name: string; vip: string; port: number }) {
  await page.goto('/services/new/full');
  await page.getByLabel('Name', { exact: true }).fill(values.name);
  await page.getByLabel('VIP').fill(values.vip);
  await page.getByLabel('Port', { exact: true }).fill(String(values.port));
  await page.getByLabel('Pool', { exact: true }).selectOption({ label: POOL });
}

test.beforeAll(async ({ browser }) => {
  page = await browser.newPage();
  await signIn(page);
  const api = apiAs(page);
  poolId = (await api.create<Named>('pools/', { name: POOL })).id;
  await api.create('members/', { pool: poolId, name: 'm1', address: '192.0.2.10', port: 8080 });
  serviceId = (await api.create<Named>('virtual-services/', { name: SERVICE, vip: vip(), port: PORT, default_pool: poolId })).id;
});

test.afterAll(async () => {
  const api = apiAs(page);
  await api.remove(`virtual-services/${serviceId}/`);
  await api.remove(`pools/${poolId}/`);
  await page.close();
});

test('a duplicate name shows the server error next to Name; nothing is created', async () => {
  const before = await serviceNames();
  await fillService({ name: SERVICE, vip: vip(), port: PORT + 1 });
  await page.getByRole('button', { name: 'Create virtual service' }).click();
  const name = page.getByLabel('Name', { exact: true });
  await expect(name).toHaveAttribute('aria-invalid', 'true');
  await expect(name).toHaveAccessibleDescription(/already exists/i);
  await expect(page).toHaveURL(/\/services\/new\/full$/);
  await snap(page, '20-validation-duplicate-name');
  expect(await serviceNames()).toEqual(before);
});

test('a VIP:port that clashes shows the server error next to VIP; nothing is created', async () => {
  const before = await serviceNames();
  await fillService({ name: `${SERVICE}-b`, vip: vip(), port: PORT });
  await page.getByRole('button', { name: 'Create virtual service' }).click();
  const vipField = page.getByLabel('VIP');
  await expect(vipField).toHaveAttribute('aria-invalid', 'true');
  await expect(vipField).toHaveAccessibleDescription(new RegExp(`clashes with virtual service ${SERVICE}`));
  await expect(page.getByLabel('Name', { exact: true })).not.toHaveAttribute('aria-invalid', 'true');
  await snap(page, '21-validation-vip-clash');
  expect(await serviceNames()).toEqual(before);
});

test('a malformed VIP is refused before anything is sent', async () => {
  const before = await serviceNames();
  const posts: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().includes('/virtual-services/')) posts.push(request.url());
  });
  await fillService({ name: `${SERVICE}-c`, vip: '10.0.0.300', port: PORT + 2 });
  await page.getByRole('button', { name: 'Create virtual service' }).click();
  await expect(page.getByLabel('VIP')).toHaveAccessibleDescription(/valid IPv4 or IPv6 address/);
  await snap(page, '22-validation-bad-vip');
  expect(posts).toEqual([]);
  expect(await serviceNames()).toEqual(before);
});

test('a member endpoint already in the pool shows the server error next to Address', async () => {
  await page.goto(`/pools/${poolId}`);
  const panel = page.getByRole('region', { name: 'Members' });
  await panel.getByLabel('Member name').fill('m2');
  await panel.getByLabel('Address').fill('192.0.2.10');
  await panel.getByLabel('Port', { exact: true }).fill('8080');
  await panel.getByRole('button', { name: 'Add member' }).click();
  await expect(panel.getByLabel('Address')).toHaveAccessibleDescription(/already a member/);
  await snap(page, '23-validation-member-endpoint');
  const names = (await apiAs(page).list<Named & { pool: number }>('members/')).filter((m) => m.pool === poolId).map((m) => m.name);
  expect(names).toEqual(['m1']);
});
