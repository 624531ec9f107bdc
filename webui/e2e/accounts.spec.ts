import { readFileSync, writeFileSync } from 'node:fs';
import { expect, type Page, test } from '@playwright/test';
import { apiAs, signIn, snap } from './support/console';
import { ARTIFACTS } from './support/paths';

// People, API tokens, your account and the audit log, through the console against the real
// API. The harness (tests/e2e/test_accounts.py) runs this spec twice and checks between:
//   ACC_STEP=create  as admin: add acc-viewer and acc-op, create an API token and keep its
//                    secret in TOKEN_FILE (the harness then calls the API with it); make a
//                    join code and keep it in JOIN_FILE (the harness joins acc-lb2 with it);
//   ACC_STEP=finish  revoke the token (the harness then sees 401); acc-op changes their own
//                    password and signs in with it; acc-viewer is kept out of the audit log;
//                    the admin finds these actions in the audit log by user and exports
//                    them; the acc-* people are deleted; the join code shows it was used by
//                    acc-lb2, and that node is deleted.

const STEP = process.env.ACC_STEP ?? 'create';
const TOKEN_FILE = `${ARTIFACTS}/acc-token.json`;
const JOIN_FILE = `${ARTIFACTS}/acc-join.json`;
const JOINED = 'acc-lb2';
const EXPORT_FILE = `${ARTIFACTS}/acc-audit-export.csv`;
const PEOPLE = { viewer: 'acc-viewer', operator: 'acc-op' } as const;
const FIRST_PASSWORD = 'acc-first-Passw0rd';
const NEW_PASSWORD = 'acc-second-Passw0rd';

type Person = { id: number; username: string };

async function openPage(page: Page, label: string, heading: string) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label }).click();
  await expect(page.getByRole('heading', { name: heading, level: 1 })).toBeVisible();
}

async function signInAs(page: Page, username: string, password: string) {
  await signIn(page, { username, password });
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible();
}

async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('heading', { name: 'Sign in' })).toBeVisible();
}

async function removePeopleLeftovers(page: Page) {
  const api = apiAs(page);
  for (const person of (await api.list<Person>('users/')).filter((p) => p.username.startsWith('acc-'))) {
    await api.remove(`users/${person.id}/`);
  }
  for (const node of (await api.list<{ id: number; name: string }>('nodes/')).filter((n) => n.name === JOINED)) {
    await api.remove(`nodes/${node.id}/`);
  }
}

async function addPerson(page: Page, username: string, role: string) {
  const form = page.getByRole('form', { name: 'Add a person' });
  await form.getByLabel('User name').fill(username);
  await form.getByLabel('Role').selectOption(role);
  await form.getByLabel('Password', { exact: true }).fill(FIRST_PASSWORD);
  await form.getByLabel('Repeat the password').fill(FIRST_PASSWORD);
  await form.getByRole('button', { name: 'Add person' }).click();
  await expect(page.getByText(`${username} added: they can sign in now.`)).toBeVisible();
  const row = page.getByRole('row', { name: new RegExp(`^${username}\\b`) });
  await expect(row.getByRole('combobox', { name: `Role of ${username}` })).toHaveValue(role);
  await expect(row.getByText('active', { exact: true })).toBeVisible();
}

test.describe('accounts', () => {
  test.skip(STEP !== 'create', 'ACC_STEP=create');

  test('admin adds people and creates an API token', async ({ page }) => {
    await test.step('sign in; remove what an earlier run left', async () => {
      await signIn(page);
      await removePeopleLeftovers(page);
    });

    await test.step('add acc-viewer and acc-op; a short password is refused before sending', async () => {
      await openPage(page, 'Users', 'Users');
      const form = page.getByRole('form', { name: 'Add a person' });
      await form.getByLabel('User name').fill(PEOPLE.viewer);
      await form.getByLabel('Password', { exact: true }).fill('short');
      await form.getByLabel('Repeat the password').fill('short');
      await form.getByRole('button', { name: 'Add person' }).click();
      await expect(form.getByText('At least 10 characters.')).toBeVisible();
      await addPerson(page, PEOPLE.viewer, 'viewer');
      await addPerson(page, PEOPLE.operator, 'operator');
      await snap(page, 'accounts-users');
    });

    await test.step('the last active admin cannot demote themselves', async () => {
      const admins = (await apiAs(page).list<Person & { role: string; is_active: boolean }>('users/')).filter((p) => p.role === 'admin' && p.is_active);
      test.skip(admins.length !== 1, 'another admin exists');
      const me = page.getByRole('row', { name: new RegExp(`^${admins[0]!.username}\\b`) });
      await me.getByRole('combobox', { name: `Role of ${admins[0]!.username}` }).selectOption('viewer');
      await me.getByRole('button', { name: /^Change the role of/ }).click();
      await expect(me.getByRole('alert')).toContainText('This is the last active admin');
      await snap(page, 'accounts-users-last-admin');
    });

    await test.step('create an API token: its secret is shown once', async () => {
      await openPage(page, 'API tokens', 'API tokens');
      const name = `acc-token-${Date.now()}`;
      const form = page.getByRole('form', { name: 'Create an API token' });
      await form.getByLabel('Token name').fill(name);
      await form.getByLabel('Role').selectOption('operator');
      await form.getByLabel('Expires after (days)').fill('1');
      await form.getByRole('button', { name: 'Create token' }).click();
      const secret = page.getByLabel(`Secret of token ${name}`);
      await expect(secret).toHaveText(/^ful_/);
      await expect(page.getByText('It will not be shown again')).toBeVisible();
      await snap(page, 'accounts-token-reveal');
      writeFileSync(TOKEN_FILE, JSON.stringify({ name, secret: await secret.textContent() }));
      await page.getByRole('button', { name: 'I have stored the secret' }).click();
      await expect(page.getByLabel(`Secret of token ${name}`)).toHaveCount(0);
      await expect(page.getByRole('row', { name: new RegExp(`^${name}`) }).getByText('active')).toBeVisible();
    });

    await test.step('make a join code for a new appliance: shown once, listed as usable', async () => {
      await openPage(page, 'Nodes', 'Nodes');
      const panel = page.getByRole('region', { name: 'Add an appliance' });
      await panel.getByRole('button', { name: 'Make a join code' }).click();
      const code = page.getByLabel('Join code', { exact: true });
      await expect(code).toHaveText(/^([0-9A-Z]{4}-){4}[0-9A-Z]{4}$/);
      await snap(page, 'nodes-join-code');
      const text = (await code.textContent()) ?? '';
      writeFileSync(JOIN_FILE, JSON.stringify({ code: text }));
      await page.getByRole('button', { name: 'I have noted the code' }).click();
      await expect(page.getByText(text)).toHaveCount(0);
      const row = panel.getByRole('row', { name: new RegExp(`^${text.slice(0, 4)}`) });
      await expect(row.getByText('usable', { exact: true })).toBeVisible();
    });
  });
});

test.describe('accounts, after the harness used the token', () => {
  test.skip(STEP !== 'finish', 'ACC_STEP=finish');

  test('revoke, own password, audit log, export, clean up', async ({ page }) => {
    const { name } = JSON.parse(readFileSync(TOKEN_FILE, 'utf8')) as { name: string };

    await test.step('revoke the token after a confirmation', async () => {
      await signIn(page);
      await openPage(page, 'API tokens', 'API tokens');
      const row = page.getByRole('row', { name: new RegExp(`^${name}`) });
      await row.getByRole('button', { name: `Revoke token ${name}` }).click();
      await row.getByRole('button', { name: `Yes, revoke: token ${name}` }).click();
      await expect(row.getByText('revoked', { exact: true })).toBeVisible();
      await snap(page, 'accounts-token-revoked');
      await signOut(page);
    });

    await test.step('acc-op changes their own password and signs in with it', async () => {
      await signInAs(page, PEOPLE.operator, FIRST_PASSWORD);
      const nav = page.getByRole('navigation', { name: 'Main' });
      await expect(nav.getByRole('link', { name: 'Audit log' })).toBeVisible();
      await expect(nav.getByRole('link', { name: 'Users' })).toHaveCount(0);
      await page.getByRole('link', { name: 'Your account' }).click();
      await expect(page.getByRole('heading', { name: 'Your account', level: 1 })).toBeVisible();
      const form = page.getByRole('form', { name: 'Change your password' });
      await form.getByLabel('Current password').fill('not-my-password');
      await form.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await form.getByLabel('Repeat the new password').fill(NEW_PASSWORD);
      await form.getByRole('button', { name: 'Change password' }).click();
      await expect(form.getByText('Wrong password.')).toBeVisible();
      await form.getByLabel('Current password').fill(FIRST_PASSWORD);
      await form.getByRole('button', { name: 'Change password' }).click();
      await expect(page.getByText('Password changed.')).toBeVisible();
      await snap(page, 'accounts-account');
      await page.goto('/users');
      await expect(page.getByText('Not allowed')).toBeVisible();
      await signOut(page);
      await signInAs(page, PEOPLE.operator, NEW_PASSWORD);
      await signOut(page);
    });

    await test.step('acc-viewer has no audit log', async () => {
      await signInAs(page, PEOPLE.viewer, FIRST_PASSWORD);
      await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' })).toHaveCount(0);
      await page.goto('/audit');
      await expect(page.getByText('Not allowed')).toBeVisible();
      await snap(page, 'accounts-audit-viewer');
      await signOut(page);
    });

    await test.step("the admin finds acc-op's actions in the audit log and exports them", async () => {
      await signIn(page);
      await openPage(page, 'Audit log', 'Audit log');
      const filters = page.getByRole('search', { name: 'Filter the audit log' });
      await filters.getByLabel('User', { exact: true }).fill(PEOPLE.operator);
      await filters.getByRole('button', { name: 'Apply filters' }).click();
      await expect(page).toHaveURL(/actor=acc-op/);
      const table = page.getByRole('table', { name: 'Audit log, newest first' });
      // Newest first: the change, then the attempt refused for a wrong current password.
      const attempts = table.getByRole('row', { name: /password-change/ });
      await expect(attempts).toHaveCount(2);
      await expect(attempts.nth(0)).toContainText('204');
      await expect(attempts.nth(1)).toContainText('400');
      await expect(table.getByRole('row', { name: /sign-in/ })).toHaveCount(2);
      await attempts.nth(0).getByRole('button', { name: /^Details of password-change/ }).click();
      await expect(page.getByText('password changed', { exact: true })).toBeVisible();
      await snap(page, 'accounts-audit-filtered');

      const download = page.waitForEvent('download');
      await page.getByRole('link', { name: 'Export CSV' }).click();
      await (await download).saveAs(EXPORT_FILE);
      const csv = readFileSync(EXPORT_FILE, 'utf8');
      expect(csv.split('\n')[0]).toMatch(/^id,time,actor,/);
      expect(csv).toContain('password-change');

      // The admin's own changes: the people added (by name) and the token revoked.
      await page.goto(`/audit?object_type=api-token&object_name=${name}`);
      await expect(table.getByRole('row', { name: /revoke/ })).toHaveCount(1);
    });

    await test.step(`the join code was used by ${JOINED}; delete that node`, async () => {
      const { code } = JSON.parse(readFileSync(JOIN_FILE, 'utf8')) as { code: string };
      await openPage(page, 'Nodes', 'Nodes');
      const used = page.getByRole('region', { name: 'Add an appliance' }).getByRole('row', { name: new RegExp(`^${code.slice(0, 4)}`) });
      await expect(used.getByText('used', { exact: true })).toBeVisible();
      await expect(used.getByText(`joined: ${JOINED}`)).toBeVisible();
      await expect(used.getByRole('button', { name: /^Revoke/ })).toHaveCount(0);
      const node = page.getByRole('table', { name: 'Registered nodes' }).getByRole('row', { name: new RegExp(`^${JOINED}\\b`) });
      await node.getByRole('button', { name: `Delete node ${JOINED}` }).click();
      await node.getByRole('button', { name: `Yes, delete: node ${JOINED}` }).click();
      await expect(page.getByRole('row', { name: new RegExp(`^${JOINED}\\b`) })).toHaveCount(0);
    });

    await test.step('delete the acc-* people', async () => {
      await openPage(page, 'Users', 'Users');
      for (const username of [PEOPLE.viewer, PEOPLE.operator]) {
        const row = page.getByRole('row', { name: new RegExp(`^${username}\\b`) });
        await row.getByRole('button', { name: `Delete ${username}` }).click();
        await row.getByRole('button', { name: `Yes, delete: ${username}` }).click();
        await expect(page.getByText(`${username} deleted.`)).toBeVisible();
        await expect(page.getByRole('row', { name: new RegExp(`^${username}\\b`) })).toHaveCount(0);
      }
      await snap(page, 'accounts-users-after');
    });
  });
});
