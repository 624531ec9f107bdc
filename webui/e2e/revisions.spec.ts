import { expect, type Page, test } from '@playwright/test';
import { apiAs, signIn, snap } from './support/console';

// Revisions through the console against a real stack, in three steps that tests/e2e/
// test_revisions.py runs one at a time (REV_STEP), checking the traffic in between:
//   apply    — the banner counts rev-pool and rev-web (made through the API), the pending list
//              shows them; the banner's Apply names them and asks for a message, and its
//              confirmation publishes them with it (the harness: the VIP answers from s1);
//   confirm  — the pool now points at s2 (through the API): apply with confirm (1 minute), see
//              the countdown, Confirm (the harness: s2 answers, the revision stays);
//   rollback — the first revision's page shows its diff; roll back to it (the harness: s1 again).
// Without REV_STEP all three run in order.

const FIRST_MESSAGE = 'rev: add rev-web';
const step = process.env.REV_STEP;

test.describe.configure({ mode: 'serial' });

function only(name: string) {
  test.skip(step !== undefined && step !== name, `REV_STEP=${step}`);
}

type Listed = { id: number; number: number; message: string };

async function firstRevision(page: Page): Promise<Listed> {
  const revisions = await apiAs(page).list<Listed>('revisions/');
  const first = revisions.find((r) => r.message === FIRST_MESSAGE);
  if (!first) throw new Error(`no revision "${FIRST_MESSAGE}": run the apply step first`);
  return first;
}

test("apply: the banner and the pending list, then the banner's Apply with a message", async ({ page }) => {
  only('apply');
  await signIn(page);
  await page.goto('/services');
  const banner = page.getByRole('region', { name: 'Changes not applied' });
  await expect(banner.getByRole('status')).toHaveText(/^2 changes not applied/);
  await snap(page, 'rev-01-banner');

  await banner.getByRole('link', { name: 'Review changes' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Apply & history' })).toBeVisible();
  const pending = page.getByRole('region', { name: 'Pending changes' });
  await expect(pending.getByText('2 changes not applied')).toBeVisible();
  const objects = pending.getByRole('list', { name: 'Changed objects' });
  await expect(objects.getByRole('listitem').filter({ hasText: 'Pool rev-pool added' })).toBeVisible();
  await expect(objects.getByRole('listitem').filter({ hasText: 'Virtual service rev-web added' })).toBeVisible();
  await expect(pending.getByRole('table', { name: 'Fields of virtual service rev-web' }).getByRole('row', { name: /^VIP/ })).toContainText('10.77.100.30');
  await expect(page.getByRole('region', { name: 'Changes not applied' })).toHaveCount(0); // the page itself lists them
  await snap(page, 'rev-02-pending');

  await page.goto('/services');
  await banner.getByRole('button', { name: 'Apply' }).click();
  const step = banner.getByRole('form', { name: 'Apply 2 changes' });
  await expect(step.getByRole('list', { name: 'Changes to apply' }).getByRole('listitem')).toHaveText([
    'Virtual service rev-web added',
    'Pool rev-pool added',
  ]);
  const message = step.getByRole('textbox', { name: 'Message' });
  await expect(message).toBeFocused();
  await message.fill(FIRST_MESSAGE);
  await snap(page, 'rev-03a-banner-apply');
  await step.getByRole('button', { name: 'Apply 2 changes' }).click();
  await expect(banner.getByRole('status')).toHaveText(/^Revision \d+ published\.$/);
  await expect(banner.getByRole('button', { name: 'Apply' })).toHaveCount(0); // nothing left to apply

  await banner.getByRole('link', { name: "See each node's result" }).click();
  const history = page.getByRole('table', { name: 'Revision history' });
  await expect(history.getByRole('row').filter({ hasText: FIRST_MESSAGE })).toContainText('on every node', { timeout: 60_000 });
  await expect(pending.getByText('Nothing to apply')).toBeVisible();
  await snap(page, 'rev-03b-applied');
});

test('confirm: apply with confirm, see the countdown, Confirm', async ({ page }) => {
  only('confirm');
  await signIn(page);
  await page.goto('/revisions');
  const pending = page.getByRole('region', { name: 'Pending changes' });
  const pool = pending.getByRole('table', { name: 'Fields of pool rev-pool' });
  await expect(pool.getByRole('row', { name: /^Member s2: address/ })).toContainText('10.77.2.12');
  await expect(pool.getByRole('row', { name: /^Member s1: address/ })).toContainText('10.77.2.11');

  const form = page.getByRole('form', { name: 'Apply changes' });
  await form.getByRole('textbox', { name: 'Message' }).fill('rev: move rev-pool to s2');
  await form.getByRole('checkbox', { name: 'Apply with confirm' }).check();
  await form.getByRole('combobox', { name: 'Confirm within' }).selectOption({ label: '1 minute' });
  await snap(page, 'rev-04-apply-with-confirm');
  await form.getByRole('button', { name: 'Apply with confirm' }).click();

  const countdown = page.getByRole('region', { name: /^Revision \d+ awaits confirmation$/ });
  await expect(countdown).toBeVisible();
  const timer = countdown.getByRole('timer');
  await expect(timer).toHaveText(/^0:[0-5]\d$|^1:00$/);
  await expect(countdown).toContainText('Fulcrum rolls back by itself: it publishes a new revision that restores the objects of revision');
  await expect(page.getByText(/^Revision \d+ is applied on every node$/)).toBeVisible({ timeout: 30_000 });
  const before = await timer.textContent();
  await expect(timer).not.toHaveText(before ?? ''); // it counts
  await snap(page, 'rev-05-countdown');

  await countdown.getByRole('button', { name: 'Confirm' }).click();
  await expect(page.getByText(/^Revision \d+ is confirmed: it stays applied\.$/)).toBeVisible();
  await expect(page.getByRole('timer')).toHaveCount(0);
  const history = page.getByRole('table', { name: 'Revision history' });
  await expect(history.getByRole('row').filter({ hasText: 'rev: move rev-pool to s2' })).toContainText('confirmed');
  await snap(page, 'rev-06-confirmed');
});

test("rollback: the first revision's diff, then roll back to it", async ({ page }) => {
  only('rollback');
  await signIn(page);
  const first = await firstRevision(page);
  await page.goto('/revisions');
  await page.getByRole('table', { name: 'Revision history' }).getByRole('link', { name: `#${first.number}`, exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: `Revision ${first.number}` })).toBeVisible();
  await expect(page.getByText(new RegExp(`^Revision ${first.number} compared with`))).toBeVisible();
  const objects = page.getByRole('region', { name: 'Objects' });
  await expect(objects.getByRole('listitem').filter({ hasText: 'Virtual service rev-web added' })).toBeVisible();
  const files = page.getByRole('region', { name: 'Rendered files' });
  const haproxy = files.getByLabel(/^haproxy\.cfg on /);
  await expect(haproxy).toContainText('+');
  await expect(haproxy.locator('.diff-add').filter({ hasText: '10.77.100.30:80' }).first()).toBeVisible();
  await snap(page, 'rev-07-diff');

  await page.getByRole('button', { name: 'Roll back to this revision' }).click();
  const ask = page.getByRole('group', { name: `Roll back to revision ${first.number}` });
  await expect(ask).toContainText(`This publishes a new revision that restores the objects of revision ${first.number}`);
  await snap(page, 'rev-08-rollback-confirm');
  await ask.getByRole('button', { name: `Yes, roll back to revision ${first.number}` }).click();
  await expect(page.getByText(/^Revision \d+ is applied on every node$/)).toBeVisible({ timeout: 60_000 });
  await snap(page, 'rev-09-rolled-back');

  await page.getByRole('link', { name: 'Apply & history' }).first().click();
  const newest = page.getByRole('table', { name: 'Revision history' }).getByRole('row').nth(1);
  await expect(newest).toContainText(`rollback to r${first.number}`);
  await expect(newest.getByRole('link', { name: `restores #${first.number}` })).toHaveAttribute('href', `/revisions/${first.id}`);
  await snap(page, 'rev-10-history');
});
