import { describe, expect, it, vi } from 'vitest';
import { ApiError, errorMessage, fieldErrors, serverFieldErrors } from './api';
import { showServerErrors } from './forms';

describe('server errors on forms', () => {
  it('reads DRF field messages', () => {
    const error = new ApiError(400, { vip: ['Enter a valid IPv4 or IPv6 address.'], name: ['a', 'b'] });
    expect(fieldErrors(error)).toEqual({ vip: 'Enter a valid IPv4 or IPv6 address.', name: 'a b' });
    expect(fieldErrors(new ApiError(409, { detail: 'in use' }))).toEqual({});
  });

  it('puts messages on the fields the form shows and returns the rest', () => {
    const setError = vi.fn();
    const error = new ApiError(400, { name: ['taken'], pool: ['gone'], non_field_errors: ['clash'] });
    const rest = showServerErrors(error, setError, ['name', 'vip']);
    expect(setError).toHaveBeenCalledTimes(1);
    expect(setError).toHaveBeenCalledWith('name', { type: 'server', message: 'taken' }, { shouldFocus: true });
    expect(rest).toBe('pool: gone clash');
  });

  it('explains a refusal without field messages', () => {
    const setError = vi.fn();
    expect(showServerErrors(new ApiError(409, { detail: 'still in use by: web' }), setError, ['name'])).toBe('still in use by: web');
    expect(showServerErrors(new ApiError(500, 'oops'), setError, ['name'])).toBe('The API answered 500.');
  });

  it('reads nested errors and the compiler\'s sub-paths as paths', () => {
    const error = new ApiError(400, {
      persistence: { cookie_name: ['Ensure this field has no more than 64 characters.'] },
      conditions: ['0/values/0: regular expression does not compile: missing )'],
      allow_cidrs: ["1: not an address or CIDR block: 'x'"],
      error_pages: [{}, { status: ['"999" is not a valid choice.'] }],
      deny_cidrs: { 2: ['Not a valid string.'] },
      non_field_errors: ['virtual-services/web: clash'],
    });
    expect(serverFieldErrors(error)).toEqual([
      { path: ['persistence', 'cookie_name'], message: 'Ensure this field has no more than 64 characters.' },
      { path: ['conditions', '0', 'values', '0'], message: 'regular expression does not compile: missing )' },
      { path: ['allow_cidrs', '1'], message: "not an address or CIDR block: 'x'" },
      { path: ['error_pages', '1', 'status'], message: '"999" is not a valid choice.' },
      { path: ['deny_cidrs', '2'], message: 'Not a valid string.' },
      { path: ['non_field_errors'], message: 'virtual-services/web: clash' },
    ]);
    expect(fieldErrors(error).allow_cidrs).toBe("Entry 2: not an address or CIDR block: 'x'");
  });

  it('puts a nested message on the deepest field shown, keeping the rest of its path', () => {
    const setError = vi.fn();
    const error = new ApiError(400, {
      persistence: ['cookie_name: invalid name'],
      conditions: ['1/values/0: bad regex', 'a rule needs at least one condition'],
      allow_cidrs: ["1: not an address or CIDR block: 'x'"],
    });
    const rest = showServerErrors(error, setError, ['persistence.cookie_name', 'conditions', 'conditions.1.values', 'allow_cidrs'] as never[]);
    expect(rest).toBeNull();
    expect(setError).toHaveBeenCalledWith('persistence.cookie_name', { type: 'server', message: 'invalid name' }, { shouldFocus: true });
    expect(setError).toHaveBeenCalledWith('conditions.1.values', { type: 'server', message: 'Entry 1: bad regex' }, { shouldFocus: false });
    expect(setError).toHaveBeenCalledWith('conditions', { type: 'server', message: 'a rule needs at least one condition' }, { shouldFocus: false });
    expect(setError).toHaveBeenCalledWith('allow_cidrs', { type: 'server', message: "Entry 2: not an address or CIDR block: 'x'" }, { shouldFocus: false });
  });

  it('lets the form translate paths, and reports fields it does not show', () => {
    const setError = vi.fn();
    const error = new ApiError(400, { error_pages: ['404/content_type: not a media type'], compression: ['needs an http or https service'] });
    const toRow = (path: string[]) => (path[1] === '404' ? ['error_pages', '0', ...path.slice(2)] : path);
    const rest = showServerErrors(error, setError, ['error_pages.0.content_type'] as never[], toRow);
    expect(setError).toHaveBeenCalledWith('error_pages.0.content_type', { type: 'server', message: 'not a media type' }, { shouldFocus: true });
    expect(rest).toBe('compression: needs an http or https service');
  });

  it('says why a refusal with problems was refused', () => {
    const error = new ApiError(409, { detail: 'Not changed.', problems: [{ path: 'pools/web/members/s1', message: 'apply the pending changes first' }] });
    expect(errorMessage(error)).toBe('Not changed: apply the pending changes first.');
  });

  it("lets a form place a compiler message about another object, and shows it whole when it does not", () => {
    const setError = vi.fn();
    const error = new ApiError(400, {
      non_field_errors: ['pools/web/members/s-1.a/port: direct-routing cannot change the port', 'pools/api: used by both layers', 'plain clash'],
    });
    const seen: string[][] = [];
    const toForwarding = (path: string[]) => {
      seen.push(path);
      return path[2] === 'web' ? ['forwarding', ...path.slice(4)] : path;
    };
    const rest = showServerErrors(error, setError, ['forwarding'] as never[], toForwarding);
    expect(seen).toEqual([['non_field_errors', 'pools', 'web', 'members', 's-1.a', 'port'], ['non_field_errors', 'pools', 'api'], ['non_field_errors']]);
    expect(setError).toHaveBeenCalledWith('forwarding', { type: 'server', message: 's-1.a / port: direct-routing cannot change the port' }, { shouldFocus: true });
    expect(rest).toBe('pools/api: used by both layers plain clash');
  });
});
