import { screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '@/lib/api';
import { renderWithProviders } from '@/test/render';
import { toMemberForm, toMemberRequest } from '../types';
import { MemberForm } from './MemberForm';

describe('MemberForm', () => {
  it('refuses a weight over 256 and a bad address', async () => {
    const onSubmit = vi.fn();
    const { user } = renderWithProviders(<MemberForm defaultValues={toMemberForm()} submitLabel="Add member" onSubmit={onSubmit} />);
    await user.type(screen.getByRole('textbox', { name: 'Member name' }), 's1');
    await user.type(screen.getByRole('textbox', { name: 'Address' }), 'server-1');
    const weight = screen.getByRole('spinbutton', { name: 'Weight' });
    await user.clear(weight);
    await user.type(weight, '300');
    await user.click(screen.getByRole('button', { name: 'Add member' }));
    expect(weight).toHaveAccessibleDescription('The weight must be between 0 and 256.');
    expect(screen.getByRole('textbox', { name: 'Address' })).toHaveAccessibleDescription('Enter a valid IPv4 or IPv6 address.');
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('shows the server refusing a duplicate endpoint next to Address, then clears after success', async () => {
    const onSubmit = vi
      .fn()
      .mockRejectedValueOnce(new ApiError(400, { address: ['10.0.0.1:80 is already a member of pool 3.'] }))
      .mockResolvedValueOnce(undefined);
    const { user } = renderWithProviders(<MemberForm defaultValues={toMemberForm()} submitLabel="Add member" onSubmit={onSubmit} />);
    await user.type(screen.getByRole('textbox', { name: 'Member name' }), 's2');
    await user.type(screen.getByRole('textbox', { name: 'Address' }), '10.0.0.1');
    await user.click(screen.getByRole('button', { name: 'Add member' }));
    expect(await screen.findByText('10.0.0.1:80 is already a member of pool 3.')).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Address' })).toHaveAccessibleDescription(/already a member/);

    await user.clear(screen.getByRole('textbox', { name: 'Address' }));
    await user.type(screen.getByRole('textbox', { name: 'Address' }), '10.0.0.2');
    await user.click(screen.getByRole('button', { name: 'Add member' }));
    expect(onSubmit).toHaveBeenLastCalledWith({
      name: 's2', address: '10.0.0.2', port: 80, weight: 1, state: 'enabled', backup: false, max_connections: 0, max_queue: 0, slowstart_ms: 0,
      min_connections: 0, forwarding: '', loopback: false,
    });
    expect(await screen.findByRole('textbox', { name: 'Member name' })).toHaveValue('');
  });

  it('takes a loopback address only for a member on the node itself', async () => {
    const onSubmit = vi.fn().mockResolvedValue(undefined);
    const { user } = renderWithProviders(<MemberForm defaultValues={toMemberForm()} submitLabel="Add member" onSubmit={onSubmit} />);
    await user.type(screen.getByRole('textbox', { name: 'Member name' }), 'local');
    await user.type(screen.getByRole('textbox', { name: 'Address' }), '127.0.0.1');
    await user.click(screen.getByRole('button', { name: 'Add member' }));
    expect(screen.getByRole('textbox', { name: 'Address' })).toHaveAccessibleDescription(/reaches each node itself/);
    expect(onSubmit).not.toHaveBeenCalled();
    await user.click(screen.getByRole('checkbox', { name: 'On the node' }));
    await user.click(screen.getByRole('button', { name: 'Add member' }));
    expect(onSubmit).toHaveBeenLastCalledWith(expect.objectContaining({ address: '127.0.0.1', loopback: true }));
  });

  it('offers a layer-4 pool thresholds and a forwarding method instead of a queue and slow start', async () => {
    const onSubmit = vi.fn().mockResolvedValue(undefined);
    const { user } = renderWithProviders(<MemberForm defaultValues={toMemberForm()} submitLabel="Add member" onSubmit={onSubmit} layer="ipvs" />);
    expect(screen.queryByRole('spinbutton', { name: 'Max queue' })).not.toBeInTheDocument();
    expect(screen.queryByRole('spinbutton', { name: 'Slow start (ms)' })).not.toBeInTheDocument();
    expect(screen.getByRole('checkbox', { name: 'Backup' })).toHaveAccessibleDescription(/sorry server/);
    await user.type(screen.getByRole('textbox', { name: 'Member name' }), 'far');
    await user.type(screen.getByRole('textbox', { name: 'Address' }), '192.0.2.1');
    await user.type(screen.getByRole('spinbutton', { name: 'Min connections' }), '10');
    await user.click(screen.getByRole('button', { name: 'Add member' }));
    expect(screen.getByRole('spinbutton', { name: 'Min connections' })).toHaveAccessibleDescription(/Needs Max connections above it/);
    expect(onSubmit).not.toHaveBeenCalled();

    await user.type(screen.getByRole('spinbutton', { name: 'Max connections' }), '100');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Forwarding' }), 'tunnel');
    await user.click(screen.getByRole('button', { name: 'Add member' }));
    const values = onSubmit.mock.calls[0]?.[0];
    expect(toMemberRequest(4, { ...values, max_queue: 9, slowstart_ms: 500 }, 'ipvs')).toEqual(
      expect.objectContaining({ pool: 4, min_connections: 10, max_connections: 100, forwarding: 'tunnel', max_queue: 0, slowstart_ms: 0 }),
    );
  });

  it('offers an HAProxy pool no layer-4 settings and sends them off', () => {
    renderWithProviders(<MemberForm defaultValues={toMemberForm()} submitLabel="Add member" onSubmit={vi.fn()} layer="proxy" />);
    expect(screen.queryByRole('spinbutton', { name: /Min connections/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('combobox', { name: /Forwarding/ })).not.toBeInTheDocument();
    expect(screen.getByRole('spinbutton', { name: 'Max queue' })).toBeInTheDocument();
    const values = { ...toMemberForm(), name: 's1', address: '10.0.0.1', min_connections: 3, forwarding: 'nat' as const };
    expect(toMemberRequest(4, values, 'proxy')).toEqual(expect.objectContaining({ min_connections: 0, forwarding: '' }));
  });
});
