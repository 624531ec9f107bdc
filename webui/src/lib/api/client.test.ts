import { afterEach, describe, expect, it, vi } from 'vitest';
import { mockApi } from '@/test/mockApi';
import { api, readCookie, setSignedOutHandler } from './client';
import { unwrap } from './errors';

describe('API client', () => {
  afterEach(() => {
    document.cookie = 'csrftoken=; expires=Thu, 01 Jan 1970 00:00:00 GMT';
    setSignedOutHandler(() => {});
  });

  it('reads cookies', () => {
    expect(readCookie('csrftoken', 'sessionid=abc; csrftoken=x%3Dy')).toBe('x=y');
    expect(readCookie('missing', 'a=b')).toBeUndefined();
  });

  it('sends the CSRF token on unsafe requests only', async () => {
    document.cookie = 'csrftoken=tok123';
    const seen: (string | null)[] = [];
    const record = (request: Request) => {
      seen.push(request.headers.get('X-CSRFToken'));
      return { status: 200, body: { count: 0, results: [] } };
    };
    mockApi('GET', '/api/v1/pools/', record);
    mockApi('POST', '/api/v1/pools/', record);
    await api.GET('/api/v1/pools/');
    await api.POST('/api/v1/pools/', { body: { name: 'web' } });
    expect(seen).toEqual([null, 'tok123']);
  });

  it('reports an ended session on 401, but not for the sign-in endpoints', async () => {
    const signedOut = vi.fn();
    setSignedOutHandler(signedOut);
    mockApi('GET', '/api/v1/pools/', { status: 401, body: { detail: 'Authentication credentials were not provided.' } });
    mockApi('GET', '/api/v1/auth/me/', { status: 401, body: { detail: 'no' } });
    await expect(unwrap(api.GET('/api/v1/pools/'))).rejects.toMatchObject({ status: 401 });
    await api.GET('/api/v1/auth/me/');
    expect(signedOut).toHaveBeenCalledTimes(1);
  });
});
