import { screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '@/lib/api';
import { renderWithProviders } from '@/test/render';
import { SignInForm } from './SignInForm';

describe('SignInForm', () => {
  it('asks for both fields', async () => {
    const onSubmit = vi.fn();
    const { user } = renderWithProviders(<SignInForm onSubmit={onSubmit} />);
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    // The form validates asynchronously: on a loaded machine the messages may come a moment after the click.
    await waitFor(() =>
      expect(screen.getByRole('textbox', { name: 'User name' })).toHaveAccessibleDescription('Enter your user name.'),
    );
    expect(screen.getByLabelText('Password')).toHaveAccessibleDescription('Enter your password.');
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('says the credentials are wrong', async () => {
    const onSubmit = vi.fn().mockRejectedValue(new ApiError(403, { detail: 'Wrong username or password.' }));
    const { user } = renderWithProviders(<SignInForm onSubmit={onSubmit} />);
    await user.type(screen.getByRole('textbox', { name: 'User name' }), 'admin');
    await user.type(screen.getByLabelText('Password'), 'nope');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Wrong user name or password.');
    expect(onSubmit).toHaveBeenCalledWith({ username: 'admin', password: 'nope' });
  });
});
