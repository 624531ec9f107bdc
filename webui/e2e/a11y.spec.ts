import { expect, type Page, test } from '@playwright/test';
import { seriousViolations } from './support/a11y';
import { apiAs, openAndSettle, removeLeftovers, signIn, snap } from './support/console';
import { members } from './support/env';

// Every page of the console, as the admin sees it (the most controls), checked with axe for
// serious and critical WCAG 2.1 AA violations in light and dark at desktop width and at a
// 390 px phone width, with a screenshot of each (a11y-<page>-<light|dark|mobile>). Then the
// keyboard: tabbing through the shell, the menu drawer on a phone, and the theme switch.
// The pool and service it needs (shl-a11y, VIP 10.77.100.90, never applied) are deleted after.

const NAME = 'shl-a11y';
const VIP = '10.77.100.90';

type Named = { id: number; name: string };
type Visit = { name: string; path: string };

async function createObjects(page: Page): Promise<{ pool: number; service: number }> {
  const api = apiAs(page);
  await removeLeftovers(page, NAME);
  const pool = (await api.create<Named>('pools/', { name: NAME, description: 'accessibility check' })).id;
  const [member] = members();
  await api.create('members/', { pool, ...member });
  const service = (await api.create<Named>('virtual-services/', { name: NAME, vip: VIP, port: 80, default_pool: pool })).id;
  return { pool, service };
}

async function pagesToVisit(page: Page, ids: { pool: number; service: number }): Promise<Visit[]> {
  const revisions = await apiAs(page).list<{ id: number }>('revisions/');
  const revisionPages = revisions.length ? [{ name: 'revision', path: `/revisions/${revisions[0]!.id}` }] : [];
  return [
    { name: 'dashboard', path: '/' },
    { name: 'services', path: '/services' },
    { name: 'service', path: `/services/${ids.service}` },
    { name: 'service-edit', path: `/services/${ids.service}/edit` },
    { name: 'service-new', path: '/services/new' },
    { name: 'pools', path: '/pools' },
    { name: 'pool', path: `/pools/${ids.pool}` },
    { name: 'pool-new', path: '/pools/new' },
    { name: 'certificates', path: '/certificates' },
    { name: 'revisions', path: '/revisions' },
    ...revisionPages,
    { name: 'audit', path: '/audit' },
    { name: 'users', path: '/users' },
    { name: 'tokens', path: '/tokens' },
    { name: 'account', path: '/account' },
    { name: 'nodes', path: '/nodes' },
    { name: 'ha', path: '/ha' },
    { name: 'not-found', path: '/shl-nowhere' },
  ];
}

/** Opens `visit`, checks it rendered (no error state, not the 404 unless meant), scans it. */
async function check(page: Page, visit: Visit, variant: string): Promise<string[]> {
  const heading = await openAndSettle(page, visit.path);
  if (visit.name !== 'not-found') expect(heading, `${visit.path} leads nowhere`).not.toBe('Page not found');
  await expect(page.locator('.state-error'), `${visit.path} shows an error`).toHaveCount(0);
  await snap(page, `a11y-${visit.name}-${variant}`);
  return (await seriousViolations(page)).map((line) => `${visit.name} (${variant}): ${line}`);
}

test('every page passes axe (serious, critical) in light, dark and at 390 px', async ({ page, browser }) => {
  test.setTimeout(600_000);
  const problems: string[] = [];
  await signIn(page);
  const ids = await createObjects(page);
  try {
    const visits = await pagesToVisit(page, ids);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const visit of visits) problems.push(...(await check(page, visit, scheme)));
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 390, height: 844 });
    for (const visit of visits) problems.push(...(await check(page, visit, 'mobile')));

    for (const [variant, options] of [
      ['light', { colorScheme: 'light' }],
      ['dark', { colorScheme: 'dark' }],
      ['mobile', { colorScheme: 'light', viewport: { width: 390, height: 844 } }],
    ] as const) {
      const context = await browser.newContext(options);
      const signedOut = await context.newPage();
      await signedOut.goto('/sign-in');
      await expect(signedOut.getByRole('heading', { name: 'Sign in', level: 1 })).toBeVisible();
      await snap(signedOut, `a11y-sign-in-${variant}`);
      problems.push(...(await seriousViolations(signedOut)).map((line) => `sign-in (${variant}): ${line}`));
      await context.close();
    }
  } finally {
    await removeLeftovers(page, NAME);
  }
  expect(problems).toEqual([]);
});

/** The element that has focus, described by its role-ish tag and text. */
async function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    if (!element) return '';
    const label = element.getAttribute('aria-label') ?? element.textContent?.trim() ?? '';
    return `${element.tagName.toLowerCase()}:${label}`;
  });
}

test('the keyboard reaches every part of the shell, and the phone menu opens and closes', async ({ page }) => {
  await signIn(page);
  await openAndSettle(page, '/pools');

  await test.step('skip link first, then every navigation link in order, with a visible focus ring', async () => {
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('a:Skip to content');
    await expect(page.getByRole('link', { name: 'Skip to content' })).toBeInViewport();
    const nav = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    expect(nav).toHaveLength(10);
    for (const label of nav) {
      await page.keyboard.press('Tab');
      expect(await focused(page)).toBe(`a:${label}`);
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
      expect(outline, `focus ring on ${label}`).not.toBe('none');
    }
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('button:Sign out');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('a:Your account');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toMatch(/^input:/);
    await snap(page, 'a11y-keyboard-theme-focus');
  });

  await test.step('the skip link moves focus to the content', async () => {
    await openAndSettle(page, '/pools');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
  });

  await test.step('following a link moves focus to the new page', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Nodes' }).press('Enter');
    await expect(page.getByRole('heading', { name: 'Nodes', level: 1 })).toBeVisible();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    await expect(page).toHaveTitle('Nodes · Fulcrum');
  });

  await test.step('on a phone, the menu button opens a drawer that Escape closes', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(page.getByRole('navigation', { name: 'Main' })).toBeHidden();
    await openAndSettle(page, '/nodes');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('a:Skip to content');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('button:Menu');
    await page.keyboard.press('Enter');
    const drawer = page.getByRole('dialog', { name: 'Menu' });
    await expect(drawer).toBeVisible();
    expect(await focused(page)).toBe('button:Close menu');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toBe('a:Dashboard');
    await snap(page, 'a11y-keyboard-drawer-open');
    await page.keyboard.press('Escape');
    await expect(drawer).toBeHidden();
    expect(await focused(page)).toBe('button:Menu');

    await page.keyboard.press('Enter');
    await expect(drawer).toBeVisible();
    await drawer.getByRole('link', { name: 'Certificates' }).press('Enter');
    await expect(page.getByRole('heading', { name: 'Certificates', level: 1 })).toBeVisible();
    await expect(drawer).toBeHidden();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
  });
});

test('the theme switch overrides the OS setting and is remembered', async ({ page }) => {
  await page.emulateMedia({ colorScheme: 'light' });
  await signIn(page);
  await openAndSettle(page, '/certificates');
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const light = await background();
  const theme = page.getByRole('group', { name: 'Theme' });
  await expect(theme.getByRole('radio', { name: 'System' })).toBeChecked();

  await theme.getByRole('radio', { name: 'Dark' }).check();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  const dark = await background();
  expect(dark).not.toBe(light);
  await page.reload();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(theme.getByRole('radio', { name: 'Dark' })).toBeChecked();
  expect(await background()).toBe(dark);
  await snap(page, 'a11y-theme-dark-chosen');

  await page.emulateMedia({ colorScheme: 'dark' });
  await theme.getByRole('radio', { name: 'Light' }).check();
  expect(await background()).toBe(light);

  await theme.getByRole('radio', { name: 'System' }).check();
  await expect(page.locator('html')).not.toHaveAttribute('data-theme');
  expect(await background()).toBe(dark);
  await page.emulateMedia({ colorScheme: 'light' });
  expect(await background()).toBe(light);
});
