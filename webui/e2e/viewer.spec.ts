import { expect, type Locator, type Page, test } from '@playwright/test';
import { openAndSettle, signIn, snap } from './support/console';
import { nodeName } from './support/env';

// What each role is offered, page by page, against the real API: the viewer reads every page
// (its data is there) and finds no control that changes anything; the operator also finds
// drain, apply and standby, but still nothing that creates, edits or deletes. The harness
// (tests/e2e/test_viewer.py) creates the people and the shl-viewer-* objects and passes them in.

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (tests/e2e/test_viewer.py sets it)`);
  return value;
}

const VIEWER = { username: required('SHL_VIEWER'), password: required('SHL_PASSWORD') };
const OPERATOR = { username: required('SHL_OPERATOR'), password: required('SHL_PASSWORD') };
const POOL = { id: required('SHL_POOL_ID'), name: required('SHL_POOL'), member: required('SHL_MEMBER') };
const SERVICE = { id: required('SHL_SERVICE_ID'), name: required('SHL_SERVICE') };
const CERTIFICATE = required('SHL_CERTIFICATE');

/** Names of controls that change something; "Apply & history" is the nav link to the history. */
const CHANGES = /^(new|add|create|edit|delete|remove|apply(?! & history)|drain|disable|enable|hand over|take part|roll ?back|generate|upload|save|revoke|mirror|move|set live|confirm|reset|activate|deactivate|change)\b/i;
/** What an operator must still not find: creating, editing and deleting objects. */
const EDITS = /^(new|add|create|edit|delete|remove|generate|upload|mirror|move|change the role|reset|activate|deactivate)\b/i;
/** Everyone manages their own API tokens and password, whatever their role. */
const OWN = /token|password/i;

type Visit = { name: string; path: string; shows: (page: Page) => Locator; own?: boolean };

const VISITS: Visit[] = [
  { name: 'dashboard', path: '/', shows: (page) => page.getByRole('heading', { name: 'Dashboard', level: 1 }) },
  { name: 'services', path: '/services', shows: (page) => page.getByRole('main').getByText(SERVICE.name, { exact: true }).first() },
  { name: 'service', path: `/services/${SERVICE.id}`, shows: (page) => page.getByRole('heading', { name: new RegExp(SERVICE.name), level: 1 }) },
  { name: 'pools', path: '/pools', shows: (page) => page.getByRole('main').getByText(POOL.name, { exact: true }).first() },
  { name: 'pool', path: `/pools/${POOL.id}`, shows: (page) => page.getByRole('rowheader', { name: new RegExp(`^${POOL.member}\\b`) }) },
  { name: 'certificates', path: '/certificates', shows: (page) => page.getByRole('rowheader', { name: CERTIFICATE }) },
  { name: 'revisions', path: '/revisions', shows: (page) => page.getByRole('heading', { name: 'Apply & history', level: 1 }) },
  { name: 'nodes', path: '/nodes', shows: (page) => page.getByRole('rowheader', { name: new RegExp(`^${nodeName() ?? 'lb1'}`) }) },
  { name: 'ha', path: '/ha', shows: (page) => page.getByRole('heading', { name: 'High availability', level: 1 }) },
  { name: 'tokens', path: '/tokens', shows: (page) => page.getByRole('heading', { name: 'API tokens', level: 1 }), own: true },
  { name: 'account', path: '/account', shows: (page) => page.getByRole('heading', { level: 1 }), own: true },
];

/** The visible buttons and links whose names match `pattern` (minus their own tokens/password where allowed). */
async function offered(page: Page, pattern: RegExp, visit: Visit): Promise<string[]> {
  const names: string[] = [];
  for (const role of ['button', 'link'] as const) {
    for (const control of await page.getByRole(role, { name: pattern }).all()) {
      const name = (await control.getAttribute('aria-label')) ?? (await control.innerText()).trim();
      if (!(visit.own && OWN.test(name))) names.push(`${visit.name}: ${role} "${name}"`);
    }
  }
  return names;
}

async function visitAll(page: Page, who: string, pattern: RegExp): Promise<string[]> {
  const found: string[] = [];
  for (const visit of VISITS) {
    await openAndSettle(page, visit.path);
    await expect(visit.shows(page), `${who} sees the data of ${visit.path}`).toBeVisible();
    await expect(page.locator('.state-error'), `${visit.path} shows an error`).toHaveCount(0);
    found.push(...(await offered(page, pattern, visit)));
    await snap(page, `shl-${who}-${visit.name}`);
  }
  return found;
}

async function signInAndWaitForRole(page: Page, who: { username: string; password: string }, role: string) {
  await page.context().clearCookies();
  await signIn(page, who);
  // The role has loaded (the shell shows it), so what is hidden is hidden for the role.
  await expect(page.locator('.user-area .badge')).toHaveText(`Role: ${role}`);
}

test('a viewer reads every page and is offered no change', async ({ page }) => {
  await signInAndWaitForRole(page, VIEWER, 'viewer');
  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: 'Pools' })).toBeVisible();
  await expect(nav.getByRole('link', { name: 'Users' })).toHaveCount(0);
  await expect(nav.getByRole('link', { name: 'Audit log' })).toHaveCount(0);

  const found = await visitAll(page, 'viewer', CHANGES);
  // Pages left out of the navigation offer nothing either when reached by address.
  for (const visit of [
    { name: 'users', path: '/users', shows: (p: Page) => p.getByRole('heading', { level: 1 }) },
    { name: 'audit', path: '/audit', shows: (p: Page) => p.getByRole('heading', { level: 1 }) },
  ]) {
    await openAndSettle(page, visit.path);
    found.push(...(await offered(page, CHANGES, visit)));
    await snap(page, `shl-viewer-${visit.name}`);
  }
  expect(found).toEqual([]);
});

test('an operator is offered drain, standby and apply, but no edit or delete', async ({ page }) => {
  await signInAndWaitForRole(page, OPERATOR, 'operator');
  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: 'Audit log' })).toBeVisible();
  await expect(nav.getByRole('link', { name: 'Users' })).toHaveCount(0);

  await openAndSettle(page, `/pools/${POOL.id}`);
  await expect(page.getByRole('group', { name: `State of ${POOL.member}` }).getByRole('button', { name: 'Drain' })).toBeVisible();
  await openAndSettle(page, '/revisions');
  await expect(page.getByRole('button', { name: 'Apply', exact: true })).toBeVisible();
  await openAndSettle(page, '/nodes');
  await expect(page.getByRole('button', { name: new RegExp(`^(Hand over master roles|Take part again).*${nodeName() ?? 'lb1'}`) })).toBeVisible();

  expect(await visitAll(page, 'operator', EDITS)).toEqual([]);
});
