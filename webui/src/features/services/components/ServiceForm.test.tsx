import { screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '@/lib/api';
import { renderWithProviders } from '@/test/render';
import { emptyServiceForm } from '../types';
import { ServiceForm } from './ServiceForm';

const pools = [
  { id: 3, name: 'web' },
  { id: 4, name: 'api' },
];

function renderForm(onSubmit = vi.fn().mockResolvedValue(undefined)) {
  const view = renderWithProviders(
    <ServiceForm defaultValues={emptyServiceForm()} pools={pools} submitLabel="Create virtual service" onSubmit={onSubmit} />,
  );
  return { ...view, onSubmit };
}

async function fillValid(user: ReturnType<typeof renderForm>['user']) {
  await user.type(screen.getByRole('textbox', { name: 'Name' }), 'web');
  await user.type(screen.getByRole('textbox', { name: 'VIP' }), '10.77.100.10');
  await user.selectOptions(screen.getByRole('combobox', { name: 'Pool' }), 'web');
}

describe('ServiceForm', () => {
  it('shows each rule broken next to its field and sends nothing', async () => {
    const { user, onSubmit } = renderForm();
    await user.type(screen.getByRole('textbox', { name: 'Name' }), '-bad name');
    await user.type(screen.getByRole('textbox', { name: 'VIP' }), '10.0.0.300');
    const port = screen.getByRole('spinbutton', { name: 'Port' });
    await user.clear(port);
    await user.type(port, '70000');
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));

    expect(screen.getByRole('textbox', { name: 'Name' })).toHaveAccessibleDescription(/starting with a letter or digit/);
    expect(screen.getByRole('textbox', { name: 'Name' })).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getByRole('textbox', { name: 'VIP' })).toHaveAccessibleDescription(/Enter a valid IPv4 or IPv6 address/);
    expect(port).toHaveAccessibleDescription('The port must be between 1 and 65535.');
    expect(screen.getByRole('combobox', { name: 'Pool' })).toHaveAccessibleDescription(/Choose the pool/);
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('sends the typed request with the pool id as a number', async () => {
    const { user, onSubmit } = renderForm();
    await fillValid(user);
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));
    expect(onSubmit).toHaveBeenCalledWith(
      expect.objectContaining({ name: 'web', vip: '10.77.100.10', port: 80, protocol: 'http', default_pool: '3', enabled: true }),
    );
  });

  it("puts the server's messages next to the fields they concern", async () => {
    const onSubmit = vi.fn().mockRejectedValue(
      new ApiError(400, {
        vip: ['10.77.100.10:80 clashes with virtual service old (10.77.100.10:80).'],
        name: ['virtual service with this name already exists.'],
      }),
    );
    const { user } = renderForm(onSubmit);
    await fillValid(user);
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));

    const vip = await screen.findByRole('textbox', { name: 'VIP' });
    expect(vip).toHaveAccessibleDescription(/clashes with virtual service old/);
    expect(vip).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getByRole('textbox', { name: 'Name' })).toHaveAccessibleDescription(/already exists/);
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it('shows a refusal no field owns above the form', async () => {
    const onSubmit = vi.fn().mockRejectedValue(new ApiError(403, { detail: 'CSRF Failed: CSRF token missing.' }));
    const { user } = renderForm(onSubmit);
    await fillValid(user);
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('CSRF Failed: CSRF token missing.');
  });
});
