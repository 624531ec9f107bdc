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

  describe('forwarding', () => {
    const protocolNames = () => within(screen.getByRole('combobox', { name: 'Protocol' })).getAllByRole('option').map((option) => option.textContent);

    it('offers TCP and UDP, a port range and hides HAProxy sections for an IPVS method; back again for proxy', async () => {
      const { user } = renderForm();
      const forwarding = screen.getByRole('combobox', { name: 'Forwarding' });
      expect(forwarding).toHaveValue('proxy');
      expect(protocolNames()).toEqual(['HTTP (layer 7)', 'HTTPS (TLS offload, layer 7)', 'TCP (layer 4 proxy)']);
      expect(screen.queryByRole('spinbutton', { name: 'Last port' })).not.toBeInTheDocument();

      await user.selectOptions(forwarding, 'nat');
      expect(forwarding).toHaveAccessibleDescription(/default gateway must be the balancer/);
      expect(protocolNames()).toEqual(['TCP', 'UDP']);
      expect(screen.getByRole('combobox', { name: 'Protocol' })).toHaveValue('tcp');
      expect(screen.getByRole('spinbutton', { name: 'Last port' })).toHaveValue(0);
      for (const section of ['Protection', 'Timeouts', 'Error pages', 'TLS']) {
        expect(screen.queryByRole('group', { name: section })).not.toBeInTheDocument();
      }
      expect(screen.queryByRole('checkbox', { name: 'Redirect every request to HTTPS' })).not.toBeInTheDocument();
      expect(screen.queryByRole('checkbox', { name: 'One-packet scheduling' })).not.toBeInTheDocument();

      await user.selectOptions(screen.getByRole('combobox', { name: 'Protocol' }), 'udp');
      expect(screen.getByRole('checkbox', { name: 'One-packet scheduling' })).toBeInTheDocument();
      await user.selectOptions(forwarding, 'direct-routing');
      expect(forwarding).toHaveAccessibleDescription(/VIP on its loopback/);
      expect(screen.getByRole('combobox', { name: 'Protocol' })).toHaveValue('udp');

      await user.selectOptions(forwarding, 'proxy');
      expect(screen.getByRole('combobox', { name: 'Protocol' })).toHaveValue('tcp');
      expect(screen.queryByRole('spinbutton', { name: 'Last port' })).not.toBeInTheDocument();
      expect(screen.getByRole('group', { name: 'Protection' })).toBeInTheDocument();
    });

    it('sends none of the HAProxy settings left behind, even invalid ones, once NAT is chosen', async () => {
      const { user, onSubmit } = renderForm();
      await fillValid(user);
      await user.type(screen.getByRole('textbox', { name: 'Allowed sources' }), '10.0.0.0/8');
      await user.type(screen.getByRole('textbox', { name: 'Denied sources' }), 'not-an-ip');
      await user.type(screen.getByRole('spinbutton', { name: 'Connections per source' }), '5');
      await user.click(screen.getByRole('checkbox', { name: 'Compress responses' }));
      await user.click(screen.getByRole('checkbox', { name: 'Redirect every request to HTTPS' }));
      await user.click(screen.getByRole('button', { name: 'Add error page' }));

      await user.selectOptions(screen.getByRole('combobox', { name: 'Forwarding' }), 'nat');
      const port = screen.getByRole('spinbutton', { name: 'Port' });
      await user.clear(port);
      await user.type(port, '8000');
      const last = screen.getByRole('spinbutton', { name: 'Last port' });
      await user.clear(last);
      await user.type(last, '8099');
      await user.click(screen.getByRole('button', { name: 'Create virtual service' }));

      expect(onSubmit).toHaveBeenCalledTimes(1);
      const request = toServiceRequest(onSubmit.mock.calls[0]?.[0]);
      expect(request).toEqual(
        expect.objectContaining({
          forwarding: 'nat', protocol: 'tcp', port: 8000, port_end: 8099, one_packet_scheduling: false,
          allow_cidrs: [], deny_cidrs: [], conn_limit: 0, max_connections: 0, rate_limit_requests: 0, max_body_bytes: 0,
          compression: false, redirect_https: false, error_pages: [], default_certificate: null, sni_certificates: [], client_ca: null,
          client_auth: 'none', hsts_max_age_s: 0,
        }),
      );
    });

    it('sends no port range or one-packet scheduling for a proxied service', () => {
      const values = { ...emptyServiceForm(), name: 'web', vip: '10.0.0.1', default_pool: '3', port_end: 90, one_packet_scheduling: true };
      expect(toServiceRequest(values)).toEqual(expect.objectContaining({ forwarding: 'proxy', port_end: 0, one_packet_scheduling: false }));
      const udp = { ...values, forwarding: 'nat' as const, protocol: 'udp' as const };
      expect(toServiceRequest(udp)).toEqual(expect.objectContaining({ port_end: 90, one_packet_scheduling: true }));
      expect(toServiceRequest({ ...udp, protocol: 'tcp' })).toEqual(expect.objectContaining({ one_packet_scheduling: false }));
    });

    it('refuses a last port below the first before sending', async () => {
      const { user, onSubmit } = renderForm();
      await fillValid(user);
      await user.selectOptions(screen.getByRole('combobox', { name: 'Forwarding' }), 'tunnel');
      await user.type(screen.getByRole('spinbutton', { name: 'Last port' }), '7');
      await user.click(screen.getByRole('button', { name: 'Create virtual service' }));
      expect(screen.getByRole('spinbutton', { name: 'Last port' })).toHaveAccessibleDescription(/must be above the first/);
      expect(onSubmit).not.toHaveBeenCalled();
    });

    it('puts what the method does to the pool next to Forwarding and Pool; other pools stay above the form', async () => {
      const onSubmit = vi.fn().mockRejectedValue(
        new ApiError(400, {
          non_field_errors: [
            "pools/web/members/s1/port: direct-routing cannot change the port: use 80 (the port of virtual service 'web') or nat",
            'pools/web/persistence/type: IPVS persistence is by source address: none or source',
            'pools/api/algorithm: never-queue is an IPVS scheduler',
          ],
        }),
      );
      const { user } = renderForm(onSubmit);
      await fillValid(user);
      await user.selectOptions(screen.getByRole('combobox', { name: 'Forwarding' }), 'direct-routing');
      await user.click(screen.getByRole('button', { name: 'Create virtual service' }));

      const forwarding = await screen.findByRole('combobox', { name: 'Forwarding' });
      expect(forwarding).toHaveAttribute('aria-invalid', 'true');
      expect(forwarding).toHaveAccessibleDescription(/^member s1 \/ port: direct-routing cannot change the port: use 80/);
      expect(screen.getByRole('combobox', { name: 'Pool' })).toHaveAccessibleDescription(/^persistence \/ type: IPVS persistence is by source address/);
      expect(screen.getByRole('alert')).toHaveTextContent('pools/api/algorithm: never-queue is an IPVS scheduler');
    });
  });
});
