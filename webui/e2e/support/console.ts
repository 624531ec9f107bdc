import { type APIResponse, type Page, expect } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { ARTIFACTS } from './paths';
import { credentials } from './env';

/** A full-page screenshot kept as a test artefact: tests/artifacts/e2e/<name>.png. */
export async function snap(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage: true });
}

/**
 * Signs in through the sign-in page (as the harness's admin unless told whom) and waits for
 * the console: its main content, which is there at any width (the navigation is behind the
 * menu button on a narrow screen).
 */
export async function signIn(page: Page, who: { username: string; password: string } = credentials()): Promise<void> {
  await page.goto('/sign-in');
  await page.getByLabel('User name').fill(who.username);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Either the console or the form's refusal (wrong password, throttled): a refusal fails
  // at once with its words instead of waiting out the test for a page that never comes.
  const refusal = page.locator('main.sign-in').getByRole('alert');
  await expect(page.locator('main#main').or(refusal).first()).toBeVisible({ timeout: 60_000 });
  if (await refusal.isVisible()) throw new Error(`sign-in refused: ${await refusal.textContent()}`);
  expect(new URL(page.url()).pathname).not.toBe('/sign-in');
}

/** Waits until the page at `path` has its h1 and nothing is still loading; returns the h1 text. */
export async function openAndSettle(page: Page, path: string): Promise<string> {
  await page.goto(path);
  const heading = page.getByRole('heading', { level: 1 });
  await expect(heading).toBeVisible();
  await expect(page.locator('.state-loading')).toHaveCount(0);
  return (await heading.textContent()) ?? '';
}

async function csrfHeaders(page: Page): Promise<Record<string, string>> {
  const cookies = await page.context().cookies();
  const token = cookies.find((c) => c.name === 'csrftoken')?.value ?? '';
  return { 'X-CSRFToken': token, Referer: page.url() };
}

async function expectOk(response: APIResponse, what: string): Promise<APIResponse> {
  if (!response.ok()) throw new Error(`${what}: ${response.status()} ${await response.text()}`);
  return response;
}

/** Direct API calls with the browser's session, for setting up and cleaning up around UI steps. */
export function apiAs(page: Page) {
  const request = page.context().request;
  return {
    async list<T>(path: string): Promise<T[]> {
      const query = path.includes('?') ? '&limit=1000' : '?limit=1000';
      const response = await expectOk(await request.get(`/api/v1/${path}${query}`), `GET ${path}`);
      return ((await response.json()) as { results: T[] }).results;
    },
    async create<T>(path: string, data: unknown): Promise<T> {
      const response = await request.post(`/api/v1/${path}`, { data, headers: await csrfHeaders(page) });
      return (await (await expectOk(response, `POST ${path}`)).json()) as T;
    },
    async get<T>(path: string): Promise<T> {
      return (await (await expectOk(await request.get(`/api/v1/${path}`), `GET ${path}`)).json()) as T;
    },
    async patch<T>(path: string, data: unknown): Promise<T> {
      const response = await request.patch(`/api/v1/${path}`, { data, headers: await csrfHeaders(page) });
      return (await (await expectOk(response, `PATCH ${path}`)).json()) as T;
    },
    async remove(path: string): Promise<void> {
      const response = await request.delete(`/api/v1/${path}`, { headers: await csrfHeaders(page) });
      if (response.status() !== 404) await expectOk(response, `DELETE ${path}`);
    },
  };
}

type Named = { id: number; name: string };

/** Removes the virtual service and pool called `name`, if a previous run left them. */
export async function removeLeftovers(page: Page, name: string): Promise<void> {
  const api = apiAs(page);
  const pools = (await api.list<Named>('pools/')).filter((p) => p.name === name);
  const services = (await api.list<Named & { default_pool: number }>('virtual-services/')).filter(
    (s) => s.name === name || pools.some((p) => p.id === s.default_pool),
  );
  for (const service of services) await api.remove(`virtual-services/${service.id}/`);
  for (const pool of pools) await api.remove(`pools/${pool.id}/`);
}

/**
 * Removes what a previous layer-7 run left: the virtual service (its rules go with it), then
 * the pool and the certificate it used, which the API refuses to delete while in use.
 */
export async function removeLayer7Leftovers(page: Page, names: { service: string; pool: string; certificate: string }): Promise<void> {
  const api = apiAs(page);
  for (const service of (await api.list<Named>('virtual-services/')).filter((s) => s.name === names.service)) {
    await api.remove(`virtual-services/${service.id}/`);
  }
  for (const pool of (await api.list<Named>('pools/')).filter((p) => p.name === names.pool)) await api.remove(`pools/${pool.id}/`);
  for (const cert of (await api.list<Named>('certificates/')).filter((c) => c.name === names.certificate)) {
    await api.remove(`certificates/${cert.id}/`);
  }
}

/**
 * Removes the HA groups whose names start with `prefix` (first freeing the IPVS sync
 * settings if they follow one: the API keeps a group they use) and lets `node` take part
 * again if a previous run left it in standby.
 */
export async function removeHaLeftovers(page: Page, prefix: string, node: string): Promise<void> {
  const api = apiAs(page);
  const groups = (await api.list<Named>('ha-groups/')).filter((g) => g.name.startsWith(prefix));
  const sync = await api.get<{ ha_group: number | null }>('ipvs-sync/');
  if (groups.some((g) => g.id === sync.ha_group)) await api.patch('ipvs-sync/', { ha_group: null });
  for (const group of groups) await api.remove(`ha-groups/${group.id}/`);
  const stood = (await api.list<Named & { standby: boolean }>('nodes/')).find((n) => n.name === node && n.standby);
  if (stood) await api.create(`nodes/${stood.id}/standby/`, { standby: false });
}

type RevisionNodes = { number: number; nodes: { node: string; state: string; message: string }[] };

/** Waits until `node` reports revision `number` (applied or failed) and returns its report. */
export async function waitForNodeReport(page: Page, number: number, node: string, timeoutMs = 60_000) {
  const api = apiAs(page);
  let report: RevisionNodes['nodes'][number] | undefined;
  await expect
    .poll(
      async () => {
        const revision = (await api.list<RevisionNodes>('revisions/')).find((r) => r.number === number);
        report = revision?.nodes.find((n) => n.node === node);
        return report?.state ?? 'missing';
      },
      { timeout: timeoutMs, intervals: [500] },
    )
    .toMatch(/^(applied|failed)$/);
  return report!;
}
