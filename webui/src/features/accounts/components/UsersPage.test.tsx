import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { User } from '../types';
import { UsersPage } from './UsersPage';

const at = '2026-11-22T10:00:00Z';
const person = (fields: Partial<User>): User => ({
  id: 1,
  username: 'admin',
  role: 'admin',
  is_active: true,
  last_login: at,
  date_joined: at,
  version: 3,
  ...fields,
});

function signedInAs(role: User['role']) {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: 'admin', is_superuser: false, role } });
}

function renderAsAdmin(users: User[] = [person({}), person({ id: 2, username: 'alice', role: 'operator', last_login: null, version: 1 })]) {
  signedInAs('admin');
  mockApi('GET', '/api/v1/users/', () => ({ status: 200, body: page(users) }));
  return renderWithProviders(<UsersPage />);
}

const row = async (name: string) => screen.findByRole('row', { name: new RegExp(`^${name}\\b`) });

describe('UsersPage', () => {
  it('tells a non-admin they may not manage users, and asks the API nothing about users', async () => {
    signedInAs('operator');
    renderWithProviders(<UsersPage />);
    expect(await screen.findByText('Not allowed')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go to your account' })).toHaveAttribute('href', '/account');
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
    expect(apiCalls.map((c) => c.path)).not.toContain('/api/v1/users/');
  });

  it('lists people with role, state and last sign-in; you cannot delete or deactivate yourself', async () => {
    renderAsAdmin([person({}), person({ id: 2, username: 'alice', role: 'operator', is_active: false, last_login: null })]);
    const you = await row('admin');
    expect(you).toHaveTextContent('you');
    expect(within(you).getByRole('combobox', { name: 'Role of admin' })).toHaveValue('admin');
    expect(within(you).queryByRole('button', { name: /Delete/ })).not.toBeInTheDocument();
    expect(within(you).queryByRole('button', { name: /Deactivate/ })).not.toBeInTheDocument();
    const alice = await row('alice');
    expect(alice).toHaveTextContent('deactivated');
    expect(alice).toHaveTextContent('never');
    expect(within(alice).getByRole('button', { name: 'Activate alice' })).toBeInTheDocument();
    expect(within(alice).getByRole('button', { name: 'Delete alice' })).toBeInTheDocument();
  });

  it('checks a new person’s password before sending, and shows the API’s refusal next to the field', async () => {
    mockApi('POST', '/api/v1/users/', { status: 400, body: { password: ['This password is too common.'] } });
    const { user } = renderAsAdmin();
    const form = await screen.findByRole('form', { name: 'Add a person' });
    const password = within(form).getByLabelText('Password');
    expect(password).toHaveAccessibleDescription(/At least 10 characters/);
    await user.type(within(form).getByRole('textbox', { name: 'User name' }), 'bob');
    await user.type(password, 'short');
    await user.type(within(form).getByLabelText('Repeat the password'), 'other');
    await user.click(within(form).getByRole('button', { name: 'Add person' }));
    expect(await within(form).findByText('At least 10 characters.')).toBeInTheDocument();
    expect(within(form).getByLabelText('Repeat the password')).toHaveAccessibleDescription('The two passwords differ.');
    expect(apiCalls.some((c) => c.method === 'POST')).toBe(false);

    await user.clear(password);
    await user.type(password, 'password123');
    await user.clear(within(form).getByLabelText('Repeat the password'));
    await user.type(within(form).getByLabelText('Repeat the password'), 'password123');
    await user.selectOptions(within(form).getByRole('combobox', { name: 'Role' }), 'operator');
    await user.click(within(form).getByRole('button', { name: 'Add person' }));
    expect(await within(form).findByText('This password is too common.')).toBeInTheDocument();
    expect(password).toHaveAccessibleDescription(/This password is too common\./);
    expect(apiCalls.at(-1)).toEqual({
      method: 'POST',
      path: '/api/v1/users/',
      body: { username: 'bob', password: 'password123', role: 'operator', is_active: true },
    });
  });

  it('adds a person and says so', async () => {
    mockApi('POST', '/api/v1/users/', { status: 201, body: person({ id: 3, username: 'bob', role: 'viewer' }) });
    const { user } = renderAsAdmin();
    const form = await screen.findByRole('form', { name: 'Add a person' });
    await user.type(within(form).getByRole('textbox', { name: 'User name' }), 'bob');
    await user.type(within(form).getByLabelText('Password'), 'a-long-secret-1');
    await user.type(within(form).getByLabelText('Repeat the password'), 'a-long-secret-1');
    await user.click(within(form).getByRole('button', { name: 'Add person' }));
    expect(await screen.findByText('bob added: they can sign in now.')).toBeInTheDocument();
    expect(within(form).getByRole('textbox', { name: 'User name' })).toHaveValue('');
  });

  it('shows the last-admin refusal of a role change in the row', async () => {
    mockApi('PATCH', '/api/v1/users/1/', { status: 400, body: { role: ['This is the last active admin: make another admin first.'] } });
    const { user } = renderAsAdmin();
    const you = await row('admin');
    await user.selectOptions(within(you).getByRole('combobox', { name: 'Role of admin' }), 'viewer');
    await user.click(within(you).getByRole('button', { name: 'Change the role of admin to viewer' }));
    expect(await within(you).findByRole('alert')).toHaveTextContent('This is the last active admin: make another admin first.');
    expect(apiCalls.at(-1)).toEqual({ method: 'PATCH', path: '/api/v1/users/1/', body: { role: 'viewer', version: 3 } });
  });

  it('deactivates after a confirmation, with the version read', async () => {
    mockApi('PATCH', '/api/v1/users/2/', { status: 200, body: person({ id: 2, username: 'alice', role: 'operator', is_active: false, version: 2 }) });
    const { user } = renderAsAdmin();
    const alice = await row('alice');
    await user.click(within(alice).getByRole('button', { name: 'Deactivate alice' }));
    await user.click(within(alice).getByRole('button', { name: 'Yes, deactivate: alice' }));
    expect(await screen.findByText('alice can no longer sign in.')).toBeInTheDocument();
    expect(apiCalls).toContainEqual({ method: 'PATCH', path: '/api/v1/users/2/', body: { is_active: false, version: 1 } });
  });

  it('resets a password with the rules checked, and the API’s refusal next to the field', async () => {
    let answer = { status: 400, body: { password: ['This password is too common.'] } as unknown };
    mockApi('PATCH', '/api/v1/users/2/', () => answer);
    const { user } = renderAsAdmin();
    const alice = await row('alice');
    await user.click(within(alice).getByRole('button', { name: 'Reset the password of alice' }));
    const form = screen.getByRole('form', { name: 'New password for alice' });
    await user.type(within(form).getByLabelText('New password'), 'password123');
    await user.type(within(form).getByLabelText('Repeat the new password'), 'password123');
    await user.click(within(form).getByRole('button', { name: 'Set password' }));
    expect(within(form).getByLabelText('New password')).toHaveAccessibleDescription(/This password is too common\./);

    answer = { status: 200, body: person({ id: 2, username: 'alice', role: 'operator', version: 2 }) };
    await user.click(within(form).getByRole('button', { name: 'Set password' }));
    expect(await screen.findByText('New password set for alice.')).toBeInTheDocument();
    expect(screen.queryByRole('form', { name: 'New password for alice' })).not.toBeInTheDocument();
    const patches = apiCalls.filter((c) => c.method === 'PATCH').map((c) => c.body);
    expect(patches).toEqual([
      { password: 'password123', version: 1 },
      { password: 'password123', version: 1 },
    ]);
  });

  it('shows why a delete was refused', async () => {
    mockApi('DELETE', '/api/v1/users/2/', { status: 400, body: { detail: 'This is the last active admin: make another admin first.' } });
    const { user } = renderAsAdmin();
    const alice = await row('alice');
    await user.click(within(alice).getByRole('button', { name: 'Delete alice' }));
    await user.click(within(alice).getByRole('button', { name: 'Yes, delete: alice' }));
    expect(await within(alice).findByRole('alert')).toHaveTextContent('This is the last active admin');
  });
});
