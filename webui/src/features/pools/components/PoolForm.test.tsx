import { screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '@/lib/api';
import { renderWithProviders } from '@/test/render';
import { type PoolLayer, toPoolForm, toPoolRequest } from '../types';
import { PoolForm } from './PoolForm';

const certificates = [{ id: 23, name: 'corp-ca', is_ca: true }];

function renderForm(onSubmit = vi.fn().mockResolvedValue(undefined), layer?: PoolLayer) {
  const view = renderWithProviders(
    <PoolForm defaultValues={toPoolForm()} certificates={certificates} submitLabel="Create pool" onSubmit={onSubmit} layer={layer} />,
  );
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
      expect.objectContaining({ name: 'secure', tls: true, tls_verify: true, tls_ca: 23, tls_sni: '@host', pool_max_conn: -1, http_reuse: 'always' }),
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

  describe('layers', () => {
    const optionLabels = (name: string) => within(screen.getByRole('combobox', { name })).getAllByRole('option').map((o) => o.textContent);

    it('groups the algorithms by layer while no service decides, and offers the hash options for the hash schedulers', async () => {
      const { user, onSubmit } = renderForm();
      const algorithm = screen.getByRole('combobox', { name: 'Algorithm' });
      expect(within(algorithm).getByRole('group', { name: 'Any layer' })).toBeInTheDocument();
      const layer4 = within(algorithm).getByRole('group', { name: 'Layer 4 (IPVS) only' });
      expect(within(layer4).getAllByRole('option').map((o) => o.getAttribute('value'))).toEqual([
        'least-connections-unweighted', 'maglev-hash', 'shortest-expected-delay', 'never-queue',
      ]);
      expect(screen.queryByRole('checkbox', { name: /Hash the source port too/ })).not.toBeInTheDocument();

      await user.selectOptions(algorithm, 'maglev-hash');
      await user.click(screen.getByRole('checkbox', { name: 'Hash the source port too (layer 4)' }));
      await user.selectOptions(screen.getByRole('combobox', { name: 'When a health check fails (layer 4)' }), 'quiesce');
      await user.type(screen.getByRole('textbox', { name: 'Name' }), 'l4');
      await user.click(screen.getByRole('button', { name: 'Create pool' }));
      expect(toPoolRequest(onSubmit.mock.calls[0]?.[0])).toEqual(
        expect.objectContaining({ algorithm: 'maglev-hash', hash_port: true, hash_fallback: false, on_failure: 'quiesce' }),
      );

      await user.selectOptions(algorithm, 'round-robin');
      expect(screen.queryByRole('checkbox', { name: /Hash the source port too/ })).not.toBeInTheDocument();
      await user.click(screen.getByRole('button', { name: 'Create pool' }));
      expect(toPoolRequest(onSubmit.mock.calls[1]?.[0])).toEqual(expect.objectContaining({ algorithm: 'round-robin', hash_port: false }));
    });

    it("keeps a layer-4 pool to IPVS's settings: source persistence without a table, no HAProxy sections", async () => {
      const { user, onSubmit } = renderForm(undefined, 'ipvs');
      expect(optionLabels('Persistence')).toEqual(['None', 'Client source address']);
      for (const section of ['Connections to members', 'Timeouts', 'Maintenance page']) {
        expect(screen.queryByRole('group', { name: section })).not.toBeInTheDocument();
      }
      expect(screen.getByRole('combobox', { name: 'When a health check fails' })).toBeInTheDocument();
      expect(within(screen.getByRole('combobox', { name: 'Algorithm' })).queryAllByRole('group')).toHaveLength(0);

      await user.selectOptions(within(persistence()).getByRole('combobox', { name: 'Persistence' }), 'source');
      expect(within(persistence()).getByRole('spinbutton', { name: 'IPv4 mask' })).toBeInTheDocument();
      expect(within(persistence()).getByRole('spinbutton', { name: 'Forget after (s)' })).toBeInTheDocument();
      expect(within(persistence()).queryByRole('spinbutton', { name: 'Table size' })).not.toBeInTheDocument();
      await user.type(screen.getByRole('textbox', { name: 'Name' }), 'l4');
      await user.click(screen.getByRole('button', { name: 'Create pool' }));
      const values = { ...onSubmit.mock.calls[0]?.[0], tls: true, proxy_protocol: 'v2', maintenance_page: '<h1>down</h1>' };
      expect(toPoolRequest(values, 'ipvs')).toEqual(expect.objectContaining({ tls: false, tls_ca: null, proxy_protocol: 'none', maintenance_page: '' }));
    });

    it("keeps an HAProxy pool to HAProxy's algorithms, without the layer-4 section", () => {
      renderForm(undefined, 'proxy');
      expect(optionLabels('Algorithm')).toEqual([
        'Round robin (weights ignored)', 'Weighted round robin', 'Least connections (weighted)', 'Source address hash',
        'Dynamic least load and connection (DLLC)',
      ]);
      expect(screen.queryByRole('group', { name: 'Layer 4 (IPVS)' })).not.toBeInTheDocument();
      expect(toPoolRequest({ ...toPoolForm(), algorithm: 'source-hash', hash_port: true, on_failure: 'quiesce' }, 'proxy')).toEqual(
        expect.objectContaining({ hash_port: false, on_failure: 'remove' }),
      );
    });
  });

  describe('dynamic least load', () => {
    it('asks for the load and agent ports on a proxy pool, and sends them', async () => {
      const { user, onSubmit } = renderForm(undefined, 'proxy');
      expect(screen.queryByRole('group', { name: 'Load feedback (DLLC)' })).not.toBeInTheDocument();
      await user.selectOptions(screen.getByRole('combobox', { name: 'Algorithm' }), 'dynamic-least-load');
      const section = screen.getByRole('group', { name: 'Load feedback (DLLC)' });
      const agent = within(section).getByRole('spinbutton', { name: 'Agent port' });
      expect(agent).toHaveValue(3333);
      await user.clear(agent);
      await user.type(agent, '5555');
      await user.type(screen.getByRole('textbox', { name: 'Name' }), 'app');
      await user.click(screen.getByRole('button', { name: 'Create pool' }));
      expect(toPoolRequest(onSubmit.mock.calls[0]?.[0], 'proxy')).toEqual(
        expect.objectContaining({ algorithm: 'dynamic-least-load', feedback_agent_port: 5555, feedback_http_port: 3334, feedback_interval_ms: 1000 }),
      );
    });

    it('shows only the load port on a layer-4 pool, and checks it', async () => {
      const { user, onSubmit } = renderForm(undefined, 'ipvs');
      await user.selectOptions(screen.getByRole('combobox', { name: 'Algorithm' }), 'dynamic-least-load');
      const section = screen.getByRole('group', { name: 'Load feedback (DLLC)' });
      expect(within(section).queryByRole('spinbutton', { name: /Agent port/ })).not.toBeInTheDocument();
      const port = within(section).getByRole('spinbutton', { name: 'Load port (JSON)' });
      await user.clear(port);
      await user.type(port, '70000');
      await user.type(screen.getByRole('textbox', { name: 'Name' }), 'l4');
      await user.click(screen.getByRole('button', { name: 'Create pool' }));
      expect(onSubmit).not.toHaveBeenCalled();
      expect(port).toHaveAccessibleDescription(expect.stringContaining('65535'));
    });
  });
});
