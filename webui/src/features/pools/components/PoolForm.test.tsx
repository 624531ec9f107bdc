import { screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '@/lib/api';
import { renderWithProviders } from '@/test/render';
import { toPoolForm, toPoolRequest } from '../types';
import { PoolForm } from './PoolForm';

const certificates = [{ id: 23, name: 'corp-ca', is_ca: true }];

function renderForm(onSubmit = vi.fn().mockResolvedValue(undefined)) {
  const view = renderWithProviders(<PoolForm defaultValues={toPoolForm()} certificates={certificates} submitLabel="Create pool" onSubmit={onSubmit} />);
  return { ...view, onSubmit };
}

const persistence = () => screen.getByRole('group', { name: 'Persistence' });

describe('PoolForm', () => {
  it('shows the persistence settings of the chosen type only', async () => {
    const { user } = renderForm();
    const type = within(persistence()).getByRole('combobox', { name: 'Persistence' });
    expect(within(persistence()).queryByRole('textbox', { name: 'Cookie name' })).not.toBeInTheDocument();

    await user.selectOptions(type, 'cookie_insert');
    expect(within(persistence()).getByRole('textbox', { name: 'Cookie name' })).toHaveValue('SERVERID');
    expect(within(persistence()).getByRole('checkbox', { name: 'HttpOnly' })).toBeChecked();
    expect(within(persistence()).queryByRole('spinbutton', { name: 'Table size' })).not.toBeInTheDocument();

    await user.selectOptions(type, 'source');
    expect(within(persistence()).getByRole('spinbutton', { name: 'IPv4 mask' })).toHaveValue(32);
    expect(within(persistence()).getByRole('spinbutton', { name: 'Table size' })).toBeInTheDocument();
    expect(within(persistence()).queryByRole('textbox', { name: 'Cookie name' })).not.toBeInTheDocument();

    await user.selectOptions(type, 'header');
    expect(within(persistence()).getByRole('textbox', { name: 'Header name' })).toBeInTheDocument();
    await user.selectOptions(type, 'ssl_session_id');
    expect(within(persistence()).getByRole('checkbox', { name: /Fall back to the source address/ })).toBeInTheDocument();
  });

  it('asks for a CA when re-encrypting with verification, and sends its id', async () => {
    const { user, onSubmit } = renderForm();
    await user.type(screen.getByRole('textbox', { name: 'Name' }), 'secure');
    expect(screen.queryByRole('checkbox', { name: "Verify members' certificates" })).not.toBeInTheDocument();
    await user.click(screen.getByRole('checkbox', { name: 'Re-encrypt (TLS to members)' }));
    await user.click(screen.getByRole('button', { name: 'Create pool' }));
    expect(screen.getByRole('combobox', { name: 'CA bundle' })).toHaveAccessibleDescription(/Choose the CA bundle/);
    expect(onSubmit).not.toHaveBeenCalled();

    await user.selectOptions(screen.getByRole('combobox', { name: 'CA bundle' }), 'corp-ca (CA)');
    await user.type(screen.getByRole('textbox', { name: 'SNI' }), '@host');
    await user.click(screen.getByRole('button', { name: 'Create pool' }));
    expect(toPoolRequest(onSubmit.mock.calls[0]?.[0])).toEqual(
      expect.objectContaining({ name: 'secure', tls: true, tls_verify: true, tls_ca: 23, tls_sni: '@host', pool_max_conn: -1, http_reuse: 'safe' }),
    );
  });

  it.each([
    ['the serializer', { persistence: { cookie_name: ['Ensure this field has no more than 64 characters.'] } }, 'Ensure this field has no more than 64 characters.'],
    ['the compiler', { persistence: ["cookie_name: invalid name 'a b': 1-64 characters"] }, "invalid name 'a b': 1-64 characters"],
  ])('puts a persistence refusal from %s on Cookie name', async (_from, body, message) => {
    const { user } = renderForm(vi.fn().mockRejectedValue(new ApiError(400, body)));
    await user.type(screen.getByRole('textbox', { name: 'Name' }), 'web');
    await user.selectOptions(within(persistence()).getByRole('combobox', { name: 'Persistence' }), 'app_cookie');
    await user.clear(within(persistence()).getByRole('textbox', { name: 'Cookie name' }));
    await user.type(within(persistence()).getByRole('textbox', { name: 'Cookie name' }), 'JSESSIONID');
    await user.click(screen.getByRole('button', { name: 'Create pool' }));
    expect(await within(persistence()).findByRole('textbox', { name: 'Cookie name' })).toHaveAccessibleDescription(
      expect.stringContaining(message),
    );
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('says above the form what belongs to a setting it does not show', async () => {
    const { user } = renderForm(vi.fn().mockRejectedValue(new ApiError(400, { tls_ca: ['certificate "x" does not exist'] })));
    await user.type(screen.getByRole('textbox', { name: 'Name' }), 'web');
    await user.click(screen.getByRole('button', { name: 'Create pool' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('tls_ca: certificate "x" does not exist');
  });
});
