import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The value of a cookie readable by scripts (Django's csrftoken is; sessionid is not). */
export function readCookie(name: string, cookies: string = document.cookie): string | undefined {
  for (const part of cookies.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

// Django refuses unsafe requests from a session without the CSRF token echoed in a header.
const csrfMiddleware: Middleware = {
  onRequest({ request }) {
    const token = readCookie('csrftoken');
    if (token && UNSAFE_METHODS.has(request.method)) request.headers.set('X-CSRFToken', token);
    return request;
  },
};

let onSignedOut: () => void = () => {};

/** Called when the API answers 401 to anything but the sign-in endpoints: the session ended. */
export function setSignedOutHandler(handler: () => void): void {
  onSignedOut = handler;
}

const sessionMiddleware: Middleware = {
  onResponse({ request, response }) {
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/api/v1/auth/')) onSignedOut();
    return response;
  },
};

/** The typed API client: paths and bodies come from the generated OpenAPI schema. */
export const api = createClient<paths>({
  baseUrl: typeof window === 'undefined' ? 'http://localhost' : window.location.origin,
  credentials: 'same-origin',
  headers: { Accept: 'application/json' },
});
api.use(csrfMiddleware, sessionMiddleware);
