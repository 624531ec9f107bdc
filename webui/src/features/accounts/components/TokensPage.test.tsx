import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { ApiToken, Role } from '../types';
import { TokensPage } from './TokensPage';

const at = '2026-11-22T10:00:00Z';
const token = (fields: Partial<ApiToken>): ApiToken => ({
  id: 1,
  name: 'ci',
  owner: 'olga',
  role: 'operator',
  prefix: 'ful_abcdef',
  state: 'active',
  created_at: at,
  expires_at: null,
  last_used_at: at,
  last_used_from: '192.0.2.7',
  revoked_at: null,
  ...fields,
});

function renderAs(role: Role, tokens: ApiToken[]) {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 5, username: 'olga', is_superuser: false, role } });
  mockApi('GET', '/api/v1/tokens/', () => ({ status: 200, body: page(tokens) }));
  return renderWithProviders(<TokensPage />);
}

describe('TokensPage', () => {
  it('lists your tokens with their state; only active ones can be revoked', async () => {
    renderAs('operator', [
      token({}),
      token({ id: 2, name: 'old', state: 'expired', expires_at: at, last_used_at: null, last_used_from: null }),
      token({ id: 3, name: 'gone', state: 'revoked', revoked_at: at }),
    ]);
    const table = await screen.findByRole('table', { name: 'API tokens' });
    expect(within(table).queryByRole('columnheader', { name: 'Owner' })).not.toBeInTheDocument();
    const row = (name: string) => within(table).getByRole('row', { name: new RegExp(`^${name}`) });
    expect(row('ci')).toHaveTextContent('ful_abcdef…');
    expect(row('ci')).toHaveTextContent('from 192.0.2.7');
    expect(within(row('old')).getByText('expired')).toHaveClass('badge-warning');
    expect(row('old')).toHaveTextContent('never');
    expect(within(row('gone')).getByText('revoked')).toBeInTheDocument();
    expect(within(row('ci')).getByRole('button', { name: 'Revoke token ci' })).toBeInTheDocument();
    expect(within(row('old')).queryByRole('button', { name: /Revoke/ })).not.toBeInTheDocument();
    expect(within(row('gone')).queryByRole('button', { name: /Revoke/ })).not.toBeInTheDocument();
  });

  it('offers roles up to your own', async () => {
    renderAs('operator', []);
    expect(await screen.findByText('No API tokens yet')).toBeInTheDocument();
    const roles = within(screen.getByRole('combobox', { name: 'Role' })).getAllByRole('option').map((o) => o.getAttribute('value'));
    expect(roles).toEqual(['viewer', 'operator']);
  });

  it('shows owners to an admin', async () => {
    renderAs('admin', [token({})]);
    const table = await screen.findByRole('table', { name: 'API tokens' });
    expect(within(table).getByRole('columnheader', { name: 'Owner' })).toBeInTheDocument();
    expect(within(table).getByRole('row', { name: /^ci/ })).toHaveTextContent('olga');
  });

  it('reveals a new secret once, with a copy button and a warning', async () => {
    const tokens: ApiToken[] = [];
    mockApi('POST', '/api/v1/tokens/', () => {
      tokens.push(token({ id: 9, name: 'deploy', role: 'viewer' }));
      return { status: 201, body: { ...token({ id: 9, name: 'deploy', role: 'viewer' }), token: 'ful_the-secret-value' } };
    });
    const { user } = renderAs('operator', tokens);
    const form = await screen.findByRole('form', { name: 'Create an API token' });
    await user.type(within(form).getByRole('textbox', { name: 'Token name' }), 'deploy');
    await user.selectOptions(within(form).getByRole('combobox', { name: 'Role' }), 'viewer');
    const days = within(form).getByRole('textbox', { name: 'Expires after (days)' });
    await user.clear(days);
    await user.type(days, '30');
    await user.click(within(form).getByRole('button', { name: 'Create token' }));

    expect(await screen.findByLabelText('Secret of token deploy')).toHaveTextContent('ful_the-secret-value');
    expect(screen.getByText(/It will not be shown again/)).toBeInTheDocument();
    expect(apiCalls).toContainEqual({ method: 'POST', path: '/api/v1/tokens/', body: { name: 'deploy', role: 'viewer', expires_in_days: 30 } });
    await user.click(screen.getByRole('button', { name: 'Copy secret' }));
    await expect(navigator.clipboard.readText()).resolves.toBe('ful_the-secret-value');

    // The list shows the new token by name and prefix only.
    const table = await screen.findByRole('table', { name: 'API tokens' });
    expect(within(table).getByRole('row', { name: /^deploy/ })).not.toHaveTextContent('the-secret-value');
    await user.click(screen.getByRole('button', { name: 'I have stored the secret' }));
    expect(screen.queryByText('ful_the-secret-value')).not.toBeInTheDocument();
  });

  it('checks the lifetime and puts the API’s refusal next to the name', async () => {
    mockApi('POST', '/api/v1/tokens/', { status: 400, body: { name: ["1-63 characters: letters, digits, '_', '.', '-'."] } });
    const { user } = renderAs('viewer', []);
    const form = await screen.findByRole('form', { name: 'Create an API token' });
    const days = within(form).getByRole('textbox', { name: 'Expires after (days)' });
    await user.type(within(form).getByRole('textbox', { name: 'Token name' }), 'x');
    await user.clear(days);
    await user.type(days, '9999');
    await user.click(within(form).getByRole('button', { name: 'Create token' }));
    expect(days).toHaveAccessibleDescription(/A whole number of days from 1 to 3650/);
    expect(apiCalls.some((c) => c.method === 'POST')).toBe(false);

    await user.clear(days); // empty: never expires
    await user.click(within(form).getByRole('button', { name: 'Create token' }));
    expect(await within(form).findByText("1-63 characters: letters, digits, '_', '.', '-'.")).toBeInTheDocument();
    expect(apiCalls.at(-1)?.body).toEqual({ name: 'x', role: 'viewer' });
  });

  it('revokes after a confirmation and shows the token as revoked', async () => {
    let tokens = [token({})];
    mockApi('DELETE', '/api/v1/tokens/1/', () => {
      tokens = [token({ state: 'revoked', revoked_at: at })];
      return { status: 204 };
    });
    mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 5, username: 'olga', is_superuser: false, role: 'operator' } });
    mockApi('GET', '/api/v1/tokens/', () => ({ status: 200, body: page(tokens) }));
    const { user } = renderWithProviders(<TokensPage />);
    await user.click(await screen.findByRole('button', { name: 'Revoke token ci' }));
    await user.click(screen.getByRole('button', { name: 'Yes, revoke: token ci' }));
    const row = screen.getByRole('row', { name: /^ci/ });
    expect(await within(row).findByText('revoked')).toBeInTheDocument();
    expect(within(row).queryByRole('button', { name: /Revoke/ })).not.toBeInTheDocument();
    expect(apiCalls).toContainEqual({ method: 'DELETE', path: '/api/v1/tokens/1/', body: undefined });
  });
});
