import { screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '@/test/render';
import { type PoolLayer, toHealthCheckForm, toHealthCheckRequest } from '../types';
import { HealthCheckForm } from './HealthCheckForm';

function renderForm(onSubmit = vi.fn().mockResolvedValue(undefined), layer?: PoolLayer) {
  const view = renderWithProviders(
    <HealthCheckForm defaultValues={toHealthCheckForm()} submitLabel="Create health check" onSubmit={onSubmit} layer={layer} />,
  );
  return { ...view, onSubmit };
}

describe('HealthCheckForm', () => {
  it('asks for HTTP settings only for HTTP checks', async () => {
    const { user } = renderForm();
    expect(screen.queryByRole('textbox', { name: 'Path' })).not.toBeInTheDocument();
    await user.selectOptions(screen.getByRole('combobox', { name: 'Check type' }), 'http');
    expect(screen.getByRole('textbox', { name: 'Path' })).toHaveValue('/');
    expect(screen.getByRole('spinbutton', { name: 'Expected status' })).toHaveValue(200);
  });

  it('refuses a timeout longer than the interval and a path with spaces', async () => {
    const { user, onSubmit } = renderForm();
    await user.selectOptions(screen.getByRole('combobox', { name: 'Check type' }), 'http');
    const path = screen.getByRole('textbox', { name: 'Path' });
    await user.clear(path);
    await user.type(path, '/he alth');
    const timeout = screen.getByRole('spinbutton', { name: 'Timeout (ms)' });
    await user.clear(timeout);
    await user.type(timeout, '5000');
    await user.click(screen.getByRole('button', { name: 'Create health check' }));
    expect(timeout).toHaveAccessibleDescription('The timeout must not exceed the interval.');
    expect(path).toHaveAccessibleDescription(/An absolute path such as \/health/);
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it('sends the console-flow check', async () => {
    const { user, onSubmit } = renderForm();
    await user.selectOptions(screen.getByRole('combobox', { name: 'Check type' }), 'http');
    const set = async (name: string, value: string) => {
      const field = screen.getByRole(name === 'Path' ? 'textbox' : 'spinbutton', { name });
      await user.clear(field);
      await user.type(field, value);
    };
    await set('Path', '/health');
    await set('Interval (ms)', '1000');
    await set('Timeout (ms)', '500');
    await set('Rise', '1');
    await set('Fall', '2');
    await user.click(screen.getByRole('button', { name: 'Create health check' }));
    const values = onSubmit.mock.calls[0]?.[0];
    expect(toHealthCheckRequest(7, values)).toEqual({
      pool: 7, type: 'http', method: 'GET', path: '/health', expected_status: 200, host: '', expect_body: '', expect_body_match: 'string',
      interval_ms: 1000, timeout_ms: 500, rise: 1, fall: 2, retry_interval_ms: 0, alpha: false, omega: false,
    });
  });

  it('leaves HTTP settings out of a TCP check, and keepalived ones out of an HAProxy pool', () => {
    expect(toHealthCheckRequest(7, toHealthCheckForm(), 'proxy')).toEqual({
      pool: 7, type: 'tcp', interval_ms: 2000, timeout_ms: 1000, rise: 2, fall: 3, retry_interval_ms: 0,
    });
  });

  it('offers the HTTP settings for HTTPS checks and the agent port for agent checks', async () => {
    const { user, onSubmit } = renderForm();
    const type = screen.getByRole('combobox', { name: 'Check type' });
    await user.selectOptions(type, 'https');
    expect(screen.getByRole('combobox', { name: 'Method' })).toHaveValue('GET');
    expect(screen.getByRole('textbox', { name: 'Expected body' })).toBeInTheDocument();
    await user.selectOptions(type, 'agent');
    expect(screen.queryByRole('textbox', { name: 'Path' })).not.toBeInTheDocument();
    const agentPort = screen.getByRole('spinbutton', { name: 'Agent port' });
    await user.clear(agentPort);
    await user.type(agentPort, '0');
    await user.click(screen.getByRole('button', { name: 'Create health check' }));
    expect(agentPort).toHaveAccessibleDescription(/The agent port must be between 1 and 65535/);
    await user.clear(agentPort);
    await user.type(agentPort, '7777');
    await user.click(screen.getByRole('button', { name: 'Create health check' }));
    expect(toHealthCheckRequest(7, onSubmit.mock.calls[0]?.[0])).toEqual({
      pool: 7, type: 'agent', agent_port: 7777, interval_ms: 2000, timeout_ms: 1000, rise: 2, fall: 3, retry_interval_ms: 0, alpha: false, omega: false,
    });
  });

  it('refuses a body match on a HEAD request', async () => {
    const { user, onSubmit } = renderForm();
    await user.selectOptions(screen.getByRole('combobox', { name: 'Check type' }), 'http');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Method' }), 'HEAD');
    await user.type(screen.getByRole('textbox', { name: 'Expected body' }), 'ok');
    await user.click(screen.getByRole('button', { name: 'Create health check' }));
    expect(screen.getByRole('textbox', { name: 'Expected body' })).toHaveAccessibleDescription(/HEAD request has no body/);
    expect(onSubmit).not.toHaveBeenCalled();
  });

  describe('layers', () => {
    const typeValues = () => within(screen.getByRole('combobox', { name: 'Check type' })).getAllByRole('option').map((o) => o.getAttribute('value'));

    it("offers each layer its own check types: keepalived's DNS and script, HAProxy's agent", () => {
      const { unmount } = renderForm(undefined, 'ipvs');
      expect(typeValues()).toEqual(['tcp', 'http', 'https', 'ping', 'dns', 'script']);
      expect(screen.getByRole('spinbutton', { name: 'Rise' })).toHaveAccessibleDescription(/Not used on layer 4: one good check brings a member back/);
      expect(screen.getByRole('checkbox', { name: 'Start members down' })).toBeInTheDocument();
      unmount();
      renderForm(undefined, 'proxy');
      expect(typeValues()).toEqual(['tcp', 'http', 'https', 'agent', 'ping']);
      expect(screen.queryByRole('checkbox', { name: /Start members down/ })).not.toBeInTheDocument();
    });

    it('groups the types by layer while no service decides', () => {
      renderForm();
      const type = screen.getByRole('combobox', { name: 'Check type' });
      expect(within(within(type).getByRole('group', { name: 'HAProxy only' })).getByRole('option')).toHaveValue('agent');
      expect(within(within(type).getByRole('group', { name: 'Layer 4 (IPVS) only' })).getAllByRole('option')).toHaveLength(2);
      expect(screen.getByRole('spinbutton', { name: 'Rise' })).toHaveAccessibleDescription(/HAProxy; layer 4 needs one/);
    });

    it('asks a DNS check for the record type and name', async () => {
      const { user, onSubmit } = renderForm(undefined, 'ipvs');
      await user.selectOptions(screen.getByRole('combobox', { name: 'Check type' }), 'dns');
      expect(screen.getByRole('textbox', { name: 'Name queried' })).toHaveValue('.');
      await user.selectOptions(screen.getByRole('combobox', { name: 'Record type' }), 'A');
      const name = screen.getByRole('textbox', { name: 'Name queried' });
      await user.clear(name);
      await user.type(name, 'bad name');
      await user.click(screen.getByRole('button', { name: 'Create health check' }));
      expect(name).toHaveAccessibleDescription(/A domain name such as www.example.com/);
      await user.clear(name);
      await user.type(name, 'www.example.com');
      await user.click(screen.getByRole('checkbox', { name: 'Start members down' }));
      await user.click(screen.getByRole('button', { name: 'Create health check' }));
      expect(toHealthCheckRequest(7, onSubmit.mock.calls[0]?.[0], 'ipvs')).toEqual({
        pool: 7, type: 'dns', dns_type: 'A', dns_name: 'www.example.com', interval_ms: 2000, timeout_ms: 1000, rise: 2, fall: 3,
        retry_interval_ms: 0, alpha: true, omega: false,
      });
    });

    it('accepts only vetted check programs, with a dynamic weight', async () => {
      const { user, onSubmit } = renderForm(undefined, 'ipvs');
      await user.selectOptions(screen.getByRole('combobox', { name: 'Check type' }), 'script');
      const command = screen.getByRole('textbox', { name: 'Command' });
      await user.type(command, '/bin/sh -c reboot');
      await user.click(screen.getByRole('button', { name: 'Create health check' }));
      expect(command).toHaveAccessibleDescription(/A program under \/etc\/fulcrum\/checks\//);
      expect(onSubmit).not.toHaveBeenCalled();
      await user.clear(command);
      await user.type(command, '/etc/fulcrum/checks/smtp --port=25');
      await user.click(screen.getByRole('checkbox', { name: 'Dynamic weight' }));
      await user.click(screen.getByRole('button', { name: 'Create health check' }));
      expect(toHealthCheckRequest(7, onSubmit.mock.calls[0]?.[0], 'ipvs')).toEqual(
        expect.objectContaining({ type: 'script', script: '/etc/fulcrum/checks/smtp --port=25', script_dynamic: true }),
      );
    });

    it('checks an MD5 digest and a retry delay before sending', async () => {
      const { user, onSubmit } = renderForm(undefined, 'ipvs');
      await user.selectOptions(screen.getByRole('combobox', { name: 'Check type' }), 'http');
      await user.selectOptions(screen.getByRole('combobox', { name: 'Body' }), 'digest');
      const body = screen.getByRole('textbox', { name: 'Expected body' });
      await user.type(body, 'nothex');
      const retry = screen.getByRole('spinbutton', { name: 'Retry delay (ms)' });
      await user.clear(retry);
      await user.type(retry, '50');
      await user.click(screen.getByRole('button', { name: 'Create health check' }));
      expect(body).toHaveAccessibleDescription(/32 lower-case hex digits/);
      expect(retry).toHaveAccessibleDescription(/0 \(the interval\) or at least 100 ms/);
      expect(onSubmit).not.toHaveBeenCalled();

      await user.clear(body);
      await user.type(body, '9b3a0c85a887a256d6939da88aabd8cd');
      await user.clear(retry);
      await user.type(retry, '500');
      await user.click(screen.getByRole('button', { name: 'Create health check' }));
      expect(toHealthCheckRequest(7, onSubmit.mock.calls[0]?.[0], 'ipvs')).toEqual(
        expect.objectContaining({ expect_body_match: 'digest', expect_body: '9b3a0c85a887a256d6939da88aabd8cd', retry_interval_ms: 500 }),
      );
    });

    it('does not offer the digest to an HAProxy pool', async () => {
      const { user } = renderForm(undefined, 'proxy');
      await user.selectOptions(screen.getByRole('combobox', { name: 'Check type' }), 'http');
      expect(within(screen.getByRole('combobox', { name: 'Body' })).getAllByRole('option').map((o) => o.getAttribute('value'))).toEqual(['string', 'regex']);
    });
  });
});
