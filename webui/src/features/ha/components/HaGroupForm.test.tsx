import { screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '@/lib/api';
import { renderWithProviders } from '@/test/render';
import { emptyHaGroupForm, type HaGroupFormValues, type HaNode, toHaGroupRequest } from '../types';
import { HaGroupForm } from './HaGroupForm';

const NODES: HaNode[] = [
  { id: 1, name: 'lb1', address: '10.0.1.3', standby: false, vrrp: [] },
  { id: 2, name: 'lb2', address: null, standby: false, vrrp: [] },
];

function renderForm(onSubmit = vi.fn(), defaultValues: HaGroupFormValues = { ...emptyHaGroupForm(), vrid: 51 }, hasPassword = false) {
  const result = renderWithProviders(
    <HaGroupForm defaultValues={defaultValues} nodes={NODES} submitLabel="Create HA group" onSubmit={onSubmit} onCancel={vi.fn()} hasPassword={hasPassword} />,
  );
  return { ...result, onSubmit };
}

const row = (n: number) => screen.getByRole('group', { name: `Node ${n}` });

async function fillValidGroup(user: ReturnType<typeof renderForm>['user']) {
  await user.type(screen.getByRole('textbox', { name: 'Name' }), 'front');
  await user.clear(screen.getByRole('textbox', { name: 'Interface' }));
  await user.type(screen.getByRole('textbox', { name: 'Interface' }), 'cl0');
  await user.type(screen.getByRole('textbox', { name: 'VIPs' }), '10.0.0.10\n10.0.0.11/24');
  await user.selectOptions(within(row(1)).getByRole('combobox', { name: 'Node' }), '1');
  const priority = within(row(1)).getByRole('spinbutton', { name: 'Priority' });
  await user.clear(priority);
  await user.type(priority, '150');
}

describe('HaGroupForm', () => {
  it('refuses what the API would before sending: VRID, a VRRPv3 advert off the 10 ms steps, a shared priority', async () => {
    const { user, onSubmit } = renderForm();
    await fillValidGroup(user);
    const vrid = screen.getByRole('spinbutton', { name: 'VRID' });
    await user.clear(vrid);
    await user.type(vrid, '300');
    const advert = screen.getByRole('spinbutton', { name: 'Advert interval (ms)' });
    await user.clear(advert);
    await user.type(advert, '205');
    await user.click(screen.getByRole('button', { name: 'Add a node' }));
    await user.selectOptions(within(row(2)).getByRole('combobox', { name: 'Node' }), '2');
    const second = within(row(2)).getByRole('spinbutton', { name: 'Priority' });
    await user.clear(second);
    await user.type(second, '150');
    await user.click(screen.getByRole('button', { name: 'Create HA group' }));

    expect(vrid).toHaveAccessibleDescription(/The VRID must be between 1 and 255/);
    expect(advert).toHaveAccessibleDescription(/^205 ms: VRRPv3 counts in 10 ms steps, from 10 to 40950 ms/);
    expect(second).toHaveAccessibleDescription(/Same as row 1: give each node its own priority/);
    // lb2 has no HA address: with a peer, the row says where to set it.
    expect(within(row(2)).getByRole('combobox', { name: 'Node' })).toHaveAccessibleDescription(/lb2 needs its HA address/);
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('asks for whole seconds with VRRPv2 and offers its password', async () => {
    const { user, onSubmit } = renderForm();
    await fillValidGroup(user);
    expect(screen.queryByLabelText('Password')).not.toBeInTheDocument();
    await user.selectOptions(screen.getByRole('combobox', { name: 'Version' }), '2');
    const advert = screen.getByRole('spinbutton', { name: 'Advert interval (ms)' });
    await user.clear(advert);
    await user.type(advert, '1500');
    await user.type(screen.getByLabelText('Password'), 'has space');
    await user.click(screen.getByRole('button', { name: 'Create HA group' }));
    expect(advert).toHaveAccessibleDescription(/whole seconds/);
    expect(screen.getByLabelText('Password')).toHaveAccessibleDescription(/^1-8 characters/);
    expect(onSubmit).not.toHaveBeenCalled();

    await user.clear(advert);
    await user.type(advert, '2000');
    await user.clear(screen.getByLabelText('Password'));
    await user.type(screen.getByLabelText('Password'), 's3cret');
    await user.click(screen.getByRole('button', { name: 'Create HA group' }));
    expect(onSubmit).toHaveBeenCalledTimes(1);
    expect(toHaGroupRequest(onSubmit.mock.calls[0]![0])).toEqual({
      name: 'front', vrid: 51, interface: 'cl0', vips: ['10.0.0.10', '10.0.0.11/24'], vrrp_version: 2, advert_interval_ms: 2000, preempt: true,
      preempt_delay_s: 0, auth_password: 's3cret', track_haproxy: true, track_interfaces: [], witness: null, garp_refresh_s: 60, garp_repeat: 3,
      nodes: [{ node: 1, priority: 150, interface: '' }],
    });
  });

  it("puts the server's refusals next to the field, the node row and the node they concern", async () => {
    const onSubmit = vi.fn().mockRejectedValueOnce(
      new ApiError(400, {
        vrid: ['HA group with this vrid already exists.'],
        vips: ['1: 10.0.0.11 is also in HA group back'],
        nodes: ['lb2/interface: invalid interface'],
        non_field_errors: ['nodes/lb2/address: needed: HA group front has peers (unicast)'],
      }),
    );
    const { user } = renderForm(onSubmit);
    await fillValidGroup(user);
    await user.click(screen.getByRole('button', { name: 'Add a node' }));
    await user.selectOptions(within(row(2)).getByRole('combobox', { name: 'Node' }), '2');
    await user.type(within(row(2)).getByRole('textbox', { name: 'Interface override' }), 'ens3');
    await user.click(screen.getByRole('button', { name: 'Create HA group' }));

    expect(await screen.findByText('HA group with this vrid already exists.')).toBeInTheDocument();
    expect(screen.getByRole('spinbutton', { name: 'VRID' })).toHaveAccessibleDescription(/already exists/);
    expect(screen.getByRole('textbox', { name: 'VIPs' })).toHaveAccessibleDescription(/^Entry 2: 10.0.0.11 is also in HA group back/);
    expect(within(row(2)).getByRole('textbox', { name: 'Interface override' })).toHaveAccessibleDescription(/^invalid interface/);
    expect(within(row(2)).getByRole('combobox', { name: 'Node' })).toHaveAccessibleDescription(/^lb2's address: needed: HA group front has peers/);
    expect(within(row(1)).getByRole('combobox', { name: 'Node' })).not.toHaveAttribute('aria-invalid');
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });

  it("shows DRF's per-row errors on the row, and what no field owns above the form", async () => {
    const onSubmit = vi.fn().mockRejectedValueOnce(
      new ApiError(400, { nodes: [{ priority: ['Ensure this value is less than or equal to 254.'] }], non_field_errors: ['ha-groups/back/vips/0: 10.0.0.10 is also in HA group front'] }),
    );
    const { user } = renderForm(onSubmit);
    await fillValidGroup(user);
    await user.click(screen.getByRole('button', { name: 'Create HA group' }));
    expect(await within(row(1)).findByText('Ensure this value is less than or equal to 254.')).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent('Not saved');
    expect(screen.getByRole('alert')).toHaveTextContent('ha-groups/back/vips/0: 10.0.0.10 is also in HA group front');
  });

  it('keeps a stored password unless a new one is typed or it is removed', async () => {
    const stored = { ...emptyHaGroupForm(), name: 'front', vrid: 52, vrrp_version: '2' as const, advert_interval_ms: 1000, vips: '10.0.0.20', nodes: [{ node: '1', priority: 100, interface: '' }] };
    const { user, onSubmit } = renderForm(vi.fn().mockResolvedValue(undefined), stored, true);
    expect(screen.getByLabelText('Password')).toHaveAccessibleDescription(/One is set: leave empty to keep it/);
    await user.click(screen.getByRole('button', { name: 'Create HA group' }));
    expect(toHaGroupRequest(onSubmit.mock.calls[0]![0])).not.toHaveProperty('auth_password');
    await user.click(screen.getByRole('checkbox', { name: 'Remove the password' }));
    await user.click(screen.getByRole('button', { name: 'Create HA group' }));
    expect(toHaGroupRequest(onSubmit.mock.calls[1]![0])).toHaveProperty('auth_password', '');
    // VRRPv3 has no authentication: switching clears it.
    await user.click(screen.getByRole('checkbox', { name: 'Remove the password' }));
    await user.selectOptions(screen.getByRole('combobox', { name: 'Version' }), '3');
    await user.click(screen.getByRole('button', { name: 'Create HA group' }));
    expect(toHaGroupRequest(onSubmit.mock.calls[2]![0])).toEqual(expect.objectContaining({ vrrp_version: 3, auth_password: '' }));
  });
});
