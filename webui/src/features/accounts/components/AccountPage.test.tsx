import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { apiCalls, mockApi } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { AccountPage } from './AccountPage';

function renderAs(role: 'viewer' | 'operator' | 'admin') {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 5, username: 'olga', is_superuser: false, role } });
  return renderWithProviders(<AccountPage />);
}

async function fill(user: ReturnType<typeof renderAs>['user'], current: string, next: string, repeat: string) {
  const form = screen.getByRole('form', { name: 'Change your password' });
  if (current) await user.type(within(form).getByLabelText('Current password'), current);
  await user.type(within(form).getByLabelText('New password'), next);
  await user.type(within(form).getByLabelText('Repeat the new password'), repeat);
  await user.click(within(form).getByRole('button', { name: 'Change password' }));
  return form;
}

describe('AccountPage', () => {
  it('says who you are and links to what is yours', async () => {
    renderAs('operator');
    expect(await screen.findByText('olga')).toBeInTheDocument();
    expect(screen.getByText(/^Operator/)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Your API tokens' })).toHaveAttribute('href', '/tokens');
    expect(screen.getByRole('link', { name: 'Your actions in the audit log' })).toHaveAttribute('href', '/audit?actor=olga');
    expect(screen.queryByRole('link', { name: 'Users' })).not.toBeInTheDocument();
  });

  it('shows no audit link to a viewer', async () => {
    renderAs('viewer');
    expect(await screen.findByText(/^Viewer/)).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Your actions in the audit log' })).not.toBeInTheDocument();
  });

  it('checks the new password before sending it', async () => {
    const { user } = renderAs('viewer');
    await screen.findByText('olga');
    const form = await fill(user, '', 'short', 'shorter');
    expect(within(form).getByLabelText('Current password')).toHaveAccessibleDescription('Enter your current password.');
    expect(within(form).getByLabelText('New password')).toHaveAccessibleDescription(/^At least 10 characters\./);
    expect(within(form).getByLabelText('Repeat the new password')).toHaveAccessibleDescription('The two passwords differ.');
    expect(apiCalls.some((c) => c.method === 'POST')).toBe(false);
  });

  it('puts a wrong current password and a common new one next to their fields', async () => {
    mockApi('POST', '/api/v1/auth/password/', {
      status: 400,
      body: { old_password: ['Wrong password.'], new_password: ['This password is too common.'] },
    });
    const { user } = renderAs('viewer');
    await screen.findByText('olga');
    const form = await fill(user, 'guess', 'password123', 'password123');
    expect(await within(form).findByText('Wrong password.')).toBeInTheDocument();
    expect(within(form).getByLabelText('Current password')).toHaveAccessibleDescription('Wrong password.');
    expect(within(form).getByLabelText('New password')).toHaveAccessibleDescription(/^This password is too common\./);
  });

  it('changes the password, optionally revoking your tokens', async () => {
    mockApi('POST', '/api/v1/auth/password/', { status: 204 });
    const { user } = renderAs('viewer');
    await screen.findByText('olga');
    await user.click(screen.getByRole('checkbox', { name: 'Also revoke all my API tokens' }));
    const form = await fill(user, 'old-secret-1', 'new-secret-12', 'new-secret-12');
    expect(await screen.findByText('Password changed, and your API tokens revoked.')).toBeInTheDocument();
    expect(apiCalls.find((c) => c.method === 'POST')).toEqual({
      method: 'POST',
      path: '/api/v1/auth/password/',
      body: { old_password: 'old-secret-1', new_password: 'new-secret-12', revoke_tokens: true },
    });
    expect(within(form).getByLabelText('Current password')).toHaveValue('');
  });
});
