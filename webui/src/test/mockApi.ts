/** A tiny in-test API: register answers per method and path; unmatched calls fail loudly. */

type Answer = { status: number; body?: unknown };
type Handler = (request: Request) => Answer | Promise<Answer>;

const handlers = new Map<string, Handler>();
export const apiCalls: { method: string; path: string; body: unknown }[] = [];

function key(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}

/** Answer `method path` (path without the query string) with `answer`, or with a handler. */
export function mockApi(method: string, path: string, answer: Answer | Handler): void {
  handlers.set(key(method, path), typeof answer === 'function' ? answer : () => answer);
}

export function resetApiMock(): void {
  handlers.clear();
  apiCalls.length = 0;
}

async function respond(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const request = input instanceof Request ? input : new Request(input, init);
  const url = new URL(request.url);
  const text = request.method === 'GET' || request.method === 'DELETE' ? '' : await request.clone().text();
  apiCalls.push({ method: request.method, path: url.pathname, body: text ? JSON.parse(text) : undefined });
  const handler = handlers.get(key(request.method, url.pathname));
  if (!handler) throw new Error(`unexpected API call: ${request.method} ${url.pathname}`);
  const { status, body } = await handler(request);
  const payload = body === undefined || status === 204 ? null : JSON.stringify(body);
  return new Response(payload, { status, headers: { 'Content-Type': 'application/json' } });
}

export function installFetchMock(): void {
  globalThis.fetch = respond as typeof fetch;
}

export function page<T>(results: T[]) {
  return { count: results.length, next: null, previous: null, results };
}

/**
 * Answer a list paged on the server: a request for one row without `ordering` is a count of
 * `rows`; any other gets the rows `answer` picks for its query (by default all of them) with
 * `count` (by default how many it picked). Returns the list requests' queries, in order.
 */
export function mockList<T>(
  path: string,
  rows: T[],
  answer: (query: URLSearchParams) => T[] = () => rows,
  count?: (query: URLSearchParams) => number,
): URLSearchParams[] {
  const queries: URLSearchParams[] = [];
  mockApi('GET', path, (request) => {
    const query = new URL(request.url).searchParams;
    if (query.get('limit') === '1' && !query.has('ordering')) return { status: 200, body: { ...page(rows.slice(0, 1)), count: rows.length } };
    queries.push(query);
    const picked = answer(query);
    return { status: 200, body: { ...page(picked), count: count ? count(query) : picked.length } };
  });
  return queries;
}
