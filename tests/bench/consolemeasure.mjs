// Measures pages in Debian's Chromium for the console benchmark (tests/bench/consolebench.py).
//
// Reads a plan (JSON) on stdin, prints the measurements (JSON) on stdout:
//   {chromium, runs, login?: {url, username, password},
//    pages: [{name, url, rows, filter, expectedVisible, session}]}
// For every run and page: a fresh browser context (cold HTTP cache; the session cookies of
// one sign-in when `session`), then
//   load   navigation start -> first table row, -> `rows` rows in the DOM, -> the frame after
//          that (painted); bytes of the document, JS, CSS and API answers (Resource Timing)
//   warm   the same after a reload (warm cache)
//   keys   each character of `filter` typed into the page's search box, then the box cleared:
//          from the key's event time to the frame after the last DOM change it caused (or
//          the next frame when it changed nothing), once the page shows `expectedVisible[i]`
//          rows and nothing is aria-busy; with the rows left visible
// Times come from the page's own clock (performance.now, 0 = navigation start). Nothing is
// asserted here; the caller checks the row counts.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const WEBUI = join(REPO, 'webui');
const ARTIFACTS = join(REPO, 'tests', 'artifacts', 'bench', 'console');
const { chromium } = createRequire(join(WEBUI, 'package.json'))('playwright-core');

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const QUIET_MS = 300; // no DOM change for this long after the last one: the keystroke is done
const LOAD_TIMEOUT_MS = 180_000; // a loaded 2-core machine took over a minute once

/** Installed before any page script: watches the table fill up and marks the moments. */
function loadProbe(expectedRows) {
  const bench = (window.__bench = { firstRow: null, allRows: null, allRowsPainted: null });
  const rowCount = () => document.querySelectorAll('table tbody tr').length;
  const check = () => {
    const rows = rowCount();
    const now = performance.now();
    if (rows > 0 && bench.firstRow === null) bench.firstRow = now;
    if (rows >= expectedRows && bench.allRows === null) {
      bench.allRows = now;
      // rAF runs just before the frame is painted; a task posted from it runs after.
      requestAnimationFrame(() => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => (bench.allRowsPainted = performance.now());
        channel.port2.postMessage(null);
      });
      observer.disconnect();
    }
  };
  const observer = new MutationObserver(check);
  observer.observe(document, { childList: true, subtree: true });
}

/** Arms the keystroke probe: the key's time, then the frame after each DOM change. */
function armKeystroke() {
  const probe = (window.__key = { start: null, lastChange: null, painted: null, changes: 0 });
  const paintAfter = () =>
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => (probe.painted = performance.now());
      channel.port2.postMessage(null);
    });
  document.addEventListener(
    'keydown',
    (event) => {
      probe.start = event.timeStamp;
      paintAfter(); // a key that changes nothing is done at the next frame
    },
    { capture: true, once: true },
  );
  probe.observer = new MutationObserver(() => {
    probe.changes += 1;
    probe.lastChange = performance.now();
    paintAfter();
  });
  // aria-busy too: a list that asks the API shows the old rows, busy, until the answer.
  const watched = { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ['aria-busy'] };
  probe.observer.observe(document.querySelector('main') ?? document.body, watched);
}

// The functions below run in the page (serialised one by one): each counts rows itself.
function visibleRows() {
  return [...document.querySelectorAll('table tbody tr')].filter((row) => !row.hidden).length;
}

function keystrokeResult() {
  const probe = window.__key;
  probe.observer.disconnect();
  const visible = [...document.querySelectorAll('table tbody tr')].filter((row) => !row.hidden).length;
  return { ms: probe.painted - probe.start, changes: probe.changes, visible };
}

/**
 * Done when the list shows the rows it should, nothing on the page is busy (a list that
 * asks the API is until the answer), the frame after the last change has been painted and
 * nothing changed since for `quietMs`. Without the row count, a render sliced
 * over several tasks (React's deferred rendering) could look quiet before it commits.
 */
function keystrokeSettled({ quietMs, expected }) {
  const probe = window.__key;
  if (probe.start === null || probe.painted === null) return false;
  const visible = [...document.querySelectorAll('table tbody tr')].filter((row) => !row.hidden).length;
  if (expected !== null && visible !== expected) return false;
  if (document.querySelector('[aria-busy="true"]')) return false; // still waiting for the API
  const last = probe.lastChange ?? probe.start;
  return probe.painted >= last && performance.now() - last >= quietMs;
}

function transferred() {
  const sum = (entries, field) => entries.reduce((total, entry) => total + (entry[field] ?? 0), 0);
  const resources = performance.getEntriesByType('resource');
  const of = (test) => resources.filter((entry) => test(new URL(entry.name).pathname, entry));
  const bytes = (entries) => ({ transfer: sum(entries, 'transferSize'), body: sum(entries, 'encodedBodySize'), count: entries.length });
  const [navigation] = performance.getEntriesByType('navigation');
  const api = of((path, entry) => path.startsWith('/api/') || entry.initiatorType === 'fetch');
  return {
    apiStart: api.length ? Math.min(...api.map((entry) => entry.startTime)) : null,
    apiEnd: api.length ? Math.max(...api.map((entry) => entry.responseEnd)) : null,
    document: { transfer: navigation.transferSize, body: navigation.encodedBodySize, count: 1 },
    js: bytes(of((path) => path.endsWith('.js') || path.endsWith('.mjs'))),
    css: bytes(of((path) => path.endsWith('.css'))),
    api: bytes(api),
    apiRequests: api.map((entry) => ({
      url: new URL(entry.name).pathname + new URL(entry.name).search,
      start: entry.startTime,
      end: entry.responseEnd,
      transfer: entry.transferSize,
    })),
    domContentLoaded: navigation.domContentLoadedEventEnd,
  };
}

async function measureLoad(page, url, rows) {
  await page.goto(url, { waitUntil: 'commit' });
  try {
    await page.waitForFunction(() => window.__bench?.allRowsPainted != null, null, { timeout: LOAD_TIMEOUT_MS, polling: 50 });
  } catch (error) {
    const shot = join(ARTIFACTS, `failed-${Date.now()}.png`);
    await page.screenshot({ path: shot });
    const found = await page.locator('table tbody tr').count();
    throw new Error(`${url}: ${found} of ${rows} rows after ${LOAD_TIMEOUT_MS} ms (${shot}): ${error.message}`);
  }
  const marks = await page.evaluate(() => window.__bench);
  const rendered = await page.locator('table tbody tr').count();
  return { ...marks, rendered, expected: rows, bytes: await page.evaluate(transferred) };
}

async function typeKey(page, key, expected) {
  await page.evaluate(armKeystroke);
  await page.keyboard.press(key);
  const settled = { quietMs: QUIET_MS, expected: expected ?? null };
  try {
    await page.waitForFunction(keystrokeSettled, settled, { timeout: LOAD_TIMEOUT_MS, polling: 25 });
  } catch (error) {
    const visible = await page.evaluate(visibleRows);
    const typed = await page.locator('input[type="search"]').inputValue();
    const shot = join(ARTIFACTS, `failed-${Date.now()}.png`);
    await page.screenshot({ path: shot, fullPage: false });
    throw new Error(`key ${key} (box: ${JSON.stringify(typed)}): ${visible} rows visible, expected ${expected} (${shot}): ${error.message}`);
  }
  return { key, ...(await page.evaluate(keystrokeResult)) };
}

/** `expected[i]`: the rows visible after key i of the filter, then after clearing the box. */
async function measureKeys(page, filter, expected = []) {
  await page.locator('input[type="search"]').focus();
  const keys = [];
  for (const [i, key] of [...filter].entries()) keys.push(await typeKey(page, key, expected[i]));
  await page.keyboard.press('ControlOrMeta+A');
  keys.push({ ...(await typeKey(page, 'Backspace', expected[filter.length])), key: 'clear' });
  return keys;
}

async function measurePage(browser, spec, storageState) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', storageState });
  try {
    await context.addInitScript(loadProbe, spec.rows);
    const page = await context.newPage();
    const cold = await measureLoad(page, spec.url, spec.rows);
    const warm = await measureLoad(page, spec.url, spec.rows);
    const keys = spec.filter ? await measureKeys(page, spec.filter, spec.expectedVisible) : [];
    return { page: spec.name, cold, warm, keys };
  } finally {
    await context.close();
  }
}

/** Signs in once (the API allows 10 sign-ins a minute) and hands the cookies to every run. */
async function signIn(browser, login) {
  if (!login) return undefined;
  const context = await browser.newContext();
  const response = await context.request.post(login.url, { data: { username: login.username, password: login.password } });
  if (!response.ok()) throw new Error(`sign-in: ${response.status()} ${await response.text()}`);
  const state = await context.storageState();
  await context.close();
  return state;
}

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const plan = JSON.parse(Buffer.concat(chunks).toString());
  const browser = await chromium.launch({ executablePath: plan.chromium, args: CHROMIUM_ARGS });
  try {
    const session = await signIn(browser, plan.login);
    const runs = [];
    for (let run = 0; run < plan.runs; run += 1) {
      // Alternate which page goes first, so neither always meets a warmer machine.
      const order = run % 2 === 0 ? plan.pages : [...plan.pages].reverse();
      for (const spec of order) runs.push({ run, ...(await measurePage(browser, spec, spec.session ? session : undefined)) });
    }
    process.stdout.write(JSON.stringify({ browser: browser.version(), runs }));
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
