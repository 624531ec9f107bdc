import { screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '@/test/render';
import { toHealthCheckForm, toHealthCheckRequest } from '../types';
import { HealthCheckForm } from './HealthCheckForm';

function renderForm(onSubmit = vi.fn().mockResolvedValue(undefined)) {
  const view = renderWithProviders(
    <HealthCheckForm defaultValues={toHealthCheckForm()} submitLabel="Create health check" onSubmit={onSubmit} />,
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
      interval_ms: 1000, timeout_ms: 500, rise: 1, fall: 2,
    });
  });

  it('leaves HTTP settings out of a TCP check', () => {
    expect(toHealthCheckRequest(7, toHealthCheckForm())).toEqual({ pool: 7, type: 'tcp', interval_ms: 2000, timeout_ms: 1000, rise: 2, fall: 3 });
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
      pool: 7, type: 'agent', agent_port: 7777, interval_ms: 2000, timeout_ms: 1000, rise: 2, fall: 3,
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
});
