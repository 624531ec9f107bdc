import { expect, type Page, type Request, test } from '@playwright/test';
import { signIn } from './support/console';

// The services list past one page, against the real API: one page of 100 at a time, searched
// and sorted by the API. The harness (tests/e2e/test_lists.py) creates LIST_COUNT services
// named LIST_PREFIX-000… on VIPs in the order of their names, and says how many there are in all.

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (tests/e2e/test_lists.py sets it)`);
  return value;
}

const PREFIX = required('LIST_PREFIX');
const COUNT = Number(required('LIST_COUNT'));
const TOTAL = Number(required('LIST_TOTAL'));

const table = (page: Page) => page.getByRole('table', { name: 'Virtual services' });
const names = (page: Page) => table(page).getByRole('rowheader').getByRole('link').allTextContents();
const pages = (page: Page) => page.getByRole('navigation', { name: 'Virtual service pages' });
/** The list's count line (each row's warnings are status regions too). */
const counted = (page: Page) => page.locator('.list-count[role="status"]');

/** The list requests the page makes (not the count's), as their query parameters. */
function listRequests(page: Page): URLSearchParams[] {
  const seen: URLSearchParams[] = [];
  page.on('request', (request: Request) => {
    const url = new URL(request.url());
    if (url.pathname === '/api/v1/virtual-services/' && url.searchParams.has('ordering')) seen.push(url.searchParams);
  });
  return seen;
}

test('the services list is paged, searched and sorted by the API', async ({ page }) => {
  await signIn(page);
  const requests = listRequests(page);
  await page.goto('/services');
  await expect(table(page).getByRole('row')).toHaveCount(101);
  await expect(counted(page)).toHaveText(`${TOTAL.toLocaleString('en')} virtual services`);
  expect(requests.every((query) => query.get('limit') === '100')).toBe(true); // never the whole list

  const filter = page.getByRole('searchbox', { name: 'Filter virtual services' });
  await filter.fill(`${PREFIX}-`);
  await expect(counted(page)).toHaveText(`${COUNT} of ${TOTAL.toLocaleString('en')} virtual services`);
  await expect(page).toHaveURL(new RegExp(`\\?q=${PREFIX}-$`));
  await expect(table(page)).not.toHaveAttribute('aria-busy');
  expect((await names(page)).slice(0, 2)).toEqual([`${PREFIX}-000`, `${PREFIX}-001`]);
  await expect(pages(page)).toContainText(`Page 1 of ${Math.ceil(COUNT / 100)}`);

  await pages(page).getByRole('button', { name: 'Next' }).click();
  await expect(table(page).getByRole('row')).toHaveCount(COUNT - 100 + 1);
  expect((await names(page))[0]).toBe(`${PREFIX}-100`);
  await expect(page).toHaveURL(/page=2/);

  // Sorted by listener, descending: the highest VIP first; a new order goes back to page 1.
  const listener = table(page).getByRole('columnheader', { name: 'Listener' });
  await listener.getByRole('button').click();
  await listener.getByRole('button').click();
  await expect(listener).toHaveAttribute('aria-sort', 'descending');
  await expect(page).not.toHaveURL(/page=/);
  await expect(table(page)).not.toHaveAttribute('aria-busy');
  expect((await names(page))[0]).toBe(`${PREFIX}-${String(COUNT - 1).padStart(3, '0')}`);
  expect(requests.at(-1)?.get('ordering')).toBe('-vip,-port,name');

  // Every word must match, in one field or another (here the name, the VIP).
  await filter.fill(`12 ${PREFIX}-1`);
  await expect(table(page)).not.toHaveAttribute('aria-busy');
  await expect(page).toHaveURL(/\?q=12/);
  await expect(table(page)).not.toHaveAttribute('aria-busy');
  const rows = await table(page).locator('tbody tr').allTextContents();
  expect(rows.length).toBeGreaterThan(1);
  expect(rows.every((row) => row.includes('12') && row.includes(`${PREFIX}-1`))).toBe(true);
  await expect(counted(page)).toHaveText(`${rows.length} of ${TOTAL.toLocaleString('en')} virtual services`);
  expect(requests.at(-1)?.get('search')).toBe(`12 ${PREFIX}-1`);
});
