import { describe, expect, it, vi } from 'vitest';
import { ApiError, fieldErrors } from './api';
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
});
