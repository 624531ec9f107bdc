import { screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '@/lib/api';
import { renderWithProviders } from '@/test/render';
import { emptyServiceForm, toServiceRequest } from '../types';
import { ServiceForm } from './ServiceForm';

const pools = [
  { id: 3, name: 'web' },
  { id: 4, name: 'api' },
];

const certificates = [
  { id: 21, name: 'www', has_key: true, is_ca: false },
  { id: 22, name: 'api', has_key: true, is_ca: false },
  { id: 23, name: 'corp-ca', has_key: false, is_ca: true },
];

function renderForm(onSubmit = vi.fn().mockResolvedValue(undefined)) {
  const view = renderWithProviders(
    <ServiceForm defaultValues={emptyServiceForm()} pools={pools} certificates={certificates} submitLabel="Create virtual service" onSubmit={onSubmit} />,
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

  it('shows TLS only for HTTPS, HTTP-only settings only for HTTP, and moves the port along', async () => {
    const { user } = renderForm();
    const port = screen.getByRole('spinbutton', { name: 'Port' });
    expect(screen.queryByRole('group', { name: 'TLS' })).not.toBeInTheDocument();
    expect(screen.getByRole('checkbox', { name: 'Redirect every request to HTTPS' })).toBeInTheDocument();

    await user.selectOptions(screen.getByRole('combobox', { name: 'Protocol' }), 'https');
    const tls = screen.getByRole('group', { name: 'TLS' });
    expect(port).toHaveValue(443);
    expect(within(tls).getByRole('combobox', { name: 'Certificate' })).toBeInTheDocument();
    expect(within(tls).queryByRole('combobox', { name: 'Client CA' })).not.toBeInTheDocument();
    await user.selectOptions(within(tls).getByRole('combobox', { name: 'Client certificates' }), 'required');
    expect(within(tls).getByRole('combobox', { name: 'Client CA' })).toBeInTheDocument();
    expect(screen.queryByRole('checkbox', { name: 'Redirect every request to HTTPS' })).not.toBeInTheDocument();

    await user.selectOptions(screen.getByRole('combobox', { name: 'Protocol' }), 'tcp');
    expect(screen.queryByRole('group', { name: 'TLS' })).not.toBeInTheDocument();
    expect(screen.queryByRole('group', { name: 'Error pages' })).not.toBeInTheDocument();
    expect(screen.queryByRole('spinbutton', { name: 'Requests per source' })).not.toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Allowed sources' })).toBeInTheDocument();
  });

  it('sends an HTTPS service with its certificates, sources and an error page', async () => {
    const { user, onSubmit } = renderForm();
    await fillValid(user);
    await user.selectOptions(screen.getByRole('combobox', { name: 'Protocol' }), 'https');
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));
    expect(screen.getByRole('combobox', { name: 'Certificate' })).toHaveAccessibleDescription(/needs a certificate/);
    expect(onSubmit).not.toHaveBeenCalled();

    await user.selectOptions(screen.getByRole('combobox', { name: 'Certificate' }), 'www');
    await user.click(within(screen.getByRole('group', { name: 'SNI certificates' })).getByRole('checkbox', { name: 'api' }));
    await user.type(screen.getByRole('textbox', { name: 'Allowed sources' }), '10.0.0.0/8\n\n2001:db8::/32');
    await user.click(screen.getByRole('button', { name: 'Add error page' }));
    await user.type(within(screen.getByRole('group', { name: 'Error page 1' })).getByRole('textbox', { name: 'Body' }), '<h1>Back soon</h1>');
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));

    expect(toServiceRequest(onSubmit.mock.calls[0]?.[0])).toEqual(
      expect.objectContaining({
        protocol: 'https', port: 443, default_certificate: 21, sni_certificates: [22], client_ca: null, redirect_https: false,
        allow_cidrs: ['10.0.0.0/8', '2001:db8::/32'], deny_cidrs: [],
        error_pages: [{ status: 503, content_type: 'text/html', body: '<h1>Back soon</h1>' }],
      }),
    );
  });

  it('refuses a source that is not an address before sending', async () => {
    const { user, onSubmit } = renderForm();
    await fillValid(user);
    await user.type(screen.getByRole('textbox', { name: 'Denied sources' }), '10.0.0.1\nnot-an-ip');
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));
    expect(screen.getByRole('textbox', { name: 'Denied sources' })).toHaveAccessibleDescription(/Entry 2: not an address or CIDR block: 'not-an-ip'/);
    expect(onSubmit).not.toHaveBeenCalled();
  });

  it("puts the server's list, error-page and TLS messages on their fields", async () => {
    const onSubmit = vi.fn().mockRejectedValue(
      new ApiError(400, {
        allow_cidrs: ["1: not an address or CIDR block: '10.0.0.0/33'"],
        error_pages: ['503/content_type: not a media type: \'text\''],
        rate_limit_requests: ['period_s: must be between 1 and 3600'],
        sni_certificates: ['Invalid pk "99" - object does not exist.'],
      }),
    );
    const { user } = renderForm(onSubmit);
    await fillValid(user);
    await user.selectOptions(screen.getByRole('combobox', { name: 'Protocol' }), 'https');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Certificate' }), 'www');
    await user.click(screen.getByRole('button', { name: 'Add error page' }));
    await user.type(screen.getByRole('textbox', { name: 'Body' }), 'down');
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));

    expect(await screen.findByRole('textbox', { name: 'Allowed sources' })).toHaveAccessibleDescription(/^Entry 2: not an address or CIDR block/);
    expect(screen.getByRole('textbox', { name: 'Content type' })).toHaveAccessibleDescription("not a media type: 'text'");
    expect(screen.getByRole('spinbutton', { name: 'Rate period (s)' })).toHaveAccessibleDescription('must be between 1 and 3600');
    expect(screen.getByRole('group', { name: 'SNI certificates' })).toHaveAccessibleDescription(/Invalid pk "99"/);
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
  });
});
