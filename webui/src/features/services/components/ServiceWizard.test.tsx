import { screen, waitFor, within } from '@testing-library/react';
import { Route, Routes } from 'react-router-dom';
import { beforeEach, describe, expect, it } from 'vitest';
import { PendingChangeNotice } from '@/components';
import type { Role } from '@/features/auth';
import { queryKeys } from '@/lib/queryKeys';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { NewServicePage } from './NewServicePage';

const POOLS = [{ id: 3, name: 'legacy', algorithm: 'round-robin', members: [], health_check: null }];
const CERTIFICATES = [
  { id: 21, name: 'www', has_key: true, is_ca: false },
  { id: 23, name: 'corp-ca', has_key: false, is_ca: true },
];

function renderWizard({ role = 'admin' as Role, pools = POOLS, certificates = CERTIFICATES } = {}) {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: role, is_superuser: false, role } });
  mockApi('GET', '/api/v1/pools/', { status: 200, body: page(pools) });
  mockApi('GET', '/api/v1/certificates/', { status: 200, body: page(certificates) });
  return renderWithProviders(
    <Routes>
      <Route path="/services/new" element={<NewServicePage />} />
      <Route
        path="/services/:id"
        element={
          <>
            <PendingChangeNotice />
            <h1>Service page</h1>
          </>
        }
      />
    </Routes>,
    { path: '/services/new' },
  );
}

type User = ReturnType<typeof renderWizard>['user'];

const CHECK_LISTENER = '/api/v1/virtual-services/check-listener/';
/** What the wizard made or removed: not its reads, nor its listener check (which saves nothing). */
const writes = () => apiCalls.filter((call) => call.method !== 'GET' && call.path !== CHECK_LISTENER);
const stepHeading = (name: string | RegExp) => screen.getByRole('heading', { name });

async function next(user: User) {
  await user.click(screen.getByRole('button', { name: 'Next' }));
}

async function fill(user: User, field: HTMLElement, value: string) {
  await user.clear(field);
  if (value) await user.type(field, value);
}

async function chooseKind(user: User, kind: RegExp) {
  await user.click(await screen.findByRole('radio', { name: kind }));
  await next(user);
  await screen.findByRole('heading', { name: /Listener$/ });
}

async function fillListener(user: User, { name = 'shop', vip = '10.77.100.20', port }: { name?: string; vip?: string; port?: string } = {}) {
  await fill(user, screen.getByRole('textbox', { name: 'Name' }), name);
  await fill(user, screen.getByRole('textbox', { name: 'VIP' }), vip);
  if (port !== undefined) await fill(user, screen.getByRole('spinbutton', { name: 'Port' }), port);
  await next(user);
  await screen.findByRole('heading', { name: /Pool and members$/ });
}

async function fillMember(user: User, index: number, { address, port }: { address: string; port?: string }) {
  const row = screen.getByRole('group', { name: `Member ${index + 1}` });
  await fill(user, within(row).getByRole('textbox', { name: 'Address' }), address);
  if (port !== undefined) await fill(user, within(row).getByRole('spinbutton', { name: 'Port' }), port);
}

/** Web service "shop" on 10.77.100.20:80 with a new pool of two members, up to the review. */
async function webUpToReview(user: User) {
  await chooseKind(user, /^Web \(HTTP/);
  await fillListener(user);
  await fillMember(user, 0, { address: '10.77.2.11' });
  await user.click(screen.getByRole('button', { name: 'Add member' }));
  await fillMember(user, 1, { address: '10.77.2.12' });
  await next(user);
  await screen.findByRole('heading', { name: 'Step 4 of 4: Review and create' });
}

function mockCreation({ service = { status: 201, body: { id: 9, name: 'shop' } } as { status: number; body: unknown } } = {}) {
  mockApi('POST', '/api/v1/pools/', { status: 201, body: { id: 7, name: 'shop' } });
  mockApi('POST', '/api/v1/health-checks/', { status: 201, body: { id: 70, pool: 7 } });
  mockApi('POST', '/api/v1/members/', { status: 201, body: { id: 71 } });
  mockApi('POST', '/api/v1/virtual-services/', service);
  mockApi('DELETE', '/api/v1/pools/7/', { status: 204 });
}

describe('new virtual service wizard', () => {
  beforeEach(() => mockApi('POST', CHECK_LISTENER, { status: 204 }));

  it('asks the API about the name and listener at the listener step, before any pool is made', async () => {
    mockApi('POST', CHECK_LISTENER, { status: 400, body: { vip: ['10.77.100.20:80/tcp clashes with virtual service old (10.77.100.20:80/tcp).'] } });
    const { user } = renderWizard();
    await chooseKind(user, /^Web \(HTTP/);
    await fill(user, screen.getByRole('textbox', { name: 'Name' }), 'shop');
    await fill(user, screen.getByRole('textbox', { name: 'VIP' }), '10.77.100.20');
    await next(user);

    const vip = screen.getByRole('textbox', { name: 'VIP' });
    await waitFor(() => expect(vip).toHaveAccessibleDescription(/clashes with virtual service old/));
    expect(stepHeading('Step 2 of 4: Listener')).toBeInTheDocument();
    expect(apiCalls.filter((call) => call.path === CHECK_LISTENER).map((call) => call.body)).toEqual([{ name: 'shop', vip: '10.77.100.20', port: 80, protocol: 'http' }]);
    expect(writes()).toEqual([]);

    mockApi('POST', CHECK_LISTENER, { status: 204 });
    await fill(user, vip, '10.77.100.21');
    await next(user);
    expect(await screen.findByRole('heading', { name: /Pool and members$/ })).toBeInTheDocument();
  });
  it('announces each step, moves focus to its heading and marks it current', async () => {
    const { user } = renderWizard();
    expect(await screen.findByRole('heading', { name: 'Step 1 of 4: Kind of service' })).toBeInTheDocument();
    const steps = screen.getByRole('list', { name: 'Steps' });
    expect(within(steps).getByText('Kind of service').closest('li')).toHaveAttribute('aria-current', 'step');
    await chooseKind(user, /^Web \(HTTP/);
    expect(stepHeading('Step 2 of 4: Listener')).toHaveFocus();
    expect(within(steps).getByText('Listener').closest('li')).toHaveAttribute('aria-current', 'step');
    expect(within(steps).getByText('Kind of service').closest('li')).not.toHaveAttribute('aria-current');
    expect(screen.getByRole('link', { name: 'Use the full form instead' })).toHaveAttribute('href', '/services/new/full');
  });

  it('sets the port by kind: 80 for web, 443 for HTTPS (with a certificate step), none for layer 4', async () => {
    const { user } = renderWizard();
    await chooseKind(user, /^Web \(HTTP/);
    expect(screen.getByRole('spinbutton', { name: 'Port' })).toHaveValue(80);
    await user.click(screen.getByRole('button', { name: 'Back' }));
    await chooseKind(user, /^Web over HTTPS/);
    expect(stepHeading('Step 2 of 5: Listener')).toBeInTheDocument();
    expect(screen.getByRole('spinbutton', { name: 'Port' })).toHaveValue(443);
    await user.click(screen.getByRole('button', { name: 'Back' }));
    await chooseKind(user, /^TCP\/UDP/);
    expect(screen.getByRole('spinbutton', { name: 'Port' })).toHaveValue(null);
    expect(screen.getByRole('combobox', { name: 'Forwarding' })).toHaveValue('nat');
    expect(screen.getByRole('combobox', { name: 'Protocol' })).toHaveValue('tcp');
  });

  it('keeps the operator on the listener step until name, VIP and port follow the API rules', async () => {
    const { user } = renderWizard();
    await chooseKind(user, /^TCP\/UDP/);
    await user.type(screen.getByRole('textbox', { name: 'Name' }), '-bad name');
    await user.type(screen.getByRole('textbox', { name: 'VIP' }), '10.0.0.300');
    await next(user);

    expect(stepHeading(/Listener$/)).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Name' })).toHaveAccessibleDescription(/starting with a letter or digit/);
    expect(screen.getByRole('textbox', { name: 'VIP' })).toHaveAccessibleDescription(/Enter a valid IPv4 or IPv6 address/);
    expect(screen.getByRole('spinbutton', { name: 'Port' })).toHaveAccessibleDescription(/Enter the port/);
    expect(screen.getByRole('textbox', { name: 'Name' })).toHaveFocus();

    await fill(user, screen.getByRole('spinbutton', { name: 'Port' }), '70000');
    await next(user);
    expect(screen.getByRole('spinbutton', { name: 'Port' })).toHaveAccessibleDescription(/between 1 and 65535/);

    // Once tried, a field is checked again as it is corrected, before the next click.
    await fill(user, screen.getByRole('textbox', { name: 'VIP' }), '10.77.100.21');
    expect(screen.getByRole('textbox', { name: 'VIP' })).not.toHaveAttribute('aria-invalid');
    expect(screen.getByRole('textbox', { name: 'VIP' })).toHaveAccessibleDescription('The address clients connect to, IPv4 or IPv6.');
    expect(writes()).toEqual([]);
  });

  it('keeps every value when going back and forth', async () => {
    const { user } = renderWizard();
    await chooseKind(user, /^Web \(HTTP/);
    await fillListener(user, { name: 'shop', vip: '10.77.100.20', port: '8080' });
    expect(screen.getByRole('textbox', { name: 'Pool name' })).toHaveValue('shop');
    await fillMember(user, 0, { address: '10.77.2.11' });
    await user.selectOptions(screen.getByRole('combobox', { name: 'Algorithm' }), 'least-connections');

    await user.click(screen.getByRole('button', { name: 'Back' }));
    expect(stepHeading('Step 2 of 4: Listener')).toHaveFocus();
    expect(screen.getByRole('textbox', { name: 'Name' })).toHaveValue('shop');
    expect(screen.getByRole('textbox', { name: 'VIP' })).toHaveValue('10.77.100.20');
    expect(screen.getByRole('spinbutton', { name: 'Port' })).toHaveValue(8080);
    await user.click(screen.getByRole('button', { name: 'Back' }));
    expect(screen.getByRole('radio', { name: /^Web \(HTTP/ })).toBeChecked();

    await next(user);
    await next(user);
    const row = await screen.findByRole('group', { name: 'Member 1' });
    expect(within(row).getByRole('textbox', { name: 'Address' })).toHaveValue('10.77.2.11');
    expect(screen.getByRole('combobox', { name: 'Algorithm' })).toHaveValue('least-connections');
    expect(screen.getByRole('combobox', { name: 'Algorithm' })).toHaveAccessibleDescription(/fewest open connections/);
  });

  it('checks the members and health check before the review, and asks for at least one member', async () => {
    const { user } = renderWizard();
    await chooseKind(user, /^Web \(HTTP/);
    await fillListener(user);
    expect(screen.getByRole('combobox', { name: 'Health check' })).toHaveValue('http');
    expect(screen.getByRole('textbox', { name: 'Path' })).toHaveValue('/');
    expect(screen.getByRole('spinbutton', { name: 'Expected status' })).toHaveValue(200);
    expect(screen.getByRole('combobox', { name: 'Algorithm' })).toHaveValue('round-robin');

    await fillMember(user, 0, { address: 'not-an-ip', port: '0' });
    await fill(user, screen.getByRole('textbox', { name: 'Path' }), 'health');
    await next(user);
    const row = screen.getByRole('group', { name: 'Member 1' });
    expect(within(row).getByRole('textbox', { name: 'Address' })).toHaveAccessibleDescription(/Enter a valid IPv4 or IPv6 address/);
    expect(within(row).getByRole('spinbutton', { name: 'Port' })).toHaveAccessibleDescription(/between 1 and 65535/);
    expect(screen.getByRole('textbox', { name: 'Path' })).toHaveAccessibleDescription(/An absolute path/);

    await user.click(screen.getByRole('button', { name: 'Remove member 1' }));
    await next(user);
    expect(screen.getByText('Add at least one member.')).toBeInTheDocument();
    expect(stepHeading(/Pool and members$/)).toBeInTheDocument();
  });

  it('creates pool, health check, members and service in order, then opens the service with a pending note', async () => {
    mockCreation();
    const { user } = renderWizard();
    await webUpToReview(user);
    const summary = screen.getByLabelText('Summary');
    expect(summary).toHaveTextContent('10.77.100.20:80 HTTP');
    expect(summary).toHaveTextContent('s1 10.77.2.11:80');
    expect(summary).toHaveTextContent('HTTP GET / expecting 200');
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));

    expect(await screen.findByRole('heading', { name: 'Service page' })).toBeInTheDocument();
    expect(writes()).toEqual([
      { method: 'POST', path: '/api/v1/pools/', body: { name: 'shop', algorithm: 'round-robin' } },
      { method: 'POST', path: '/api/v1/health-checks/', body: { pool: 7, type: 'http', method: 'GET', path: '/', expected_status: 200 } },
      { method: 'POST', path: '/api/v1/members/', body: { pool: 7, name: 's1', address: '10.77.2.11', port: 80 } },
      { method: 'POST', path: '/api/v1/members/', body: { pool: 7, name: 's2', address: '10.77.2.12', port: 80 } },
      {
        method: 'POST',
        path: '/api/v1/virtual-services/',
        body: { name: 'shop', vip: '10.77.100.20', port: 80, forwarding: 'proxy', protocol: 'http', default_pool: 7, enabled: true },
      },
    ]);
    const note = screen.getByRole('status');
    expect(note).toHaveTextContent('Virtual service shop created.');
    expect(note).toHaveTextContent('pending until applied');
    expect(within(note).getByRole('link', { name: 'Apply & history' })).toHaveAttribute('href', '/revisions');
  });

  it('puts a 400 about the VIP next to the VIP on the listener step and removes the pool it made', async () => {
    mockCreation({ service: { status: 400, body: { vip: ['10.77.100.20:80 clashes with virtual service old (10.77.100.20:80).'] } } });
    const { user } = renderWizard();
    await webUpToReview(user);
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));

    const vip = await screen.findByRole('textbox', { name: 'VIP' });
    expect(stepHeading('Step 2 of 4: Listener')).toBeInTheDocument();
    expect(vip).toHaveAccessibleDescription(/clashes with virtual service old/);
    expect(vip).toHaveAttribute('aria-invalid', 'true');
    await waitFor(() => expect(vip).toHaveFocus());
    expect(writes().at(-1)).toEqual({ method: 'DELETE', path: '/api/v1/pools/7/', body: undefined });
    const alert = screen.getByRole('alert');
    expect(alert).toHaveTextContent('The API refused the virtual service');
    expect(alert).toHaveTextContent('pool shop (with its health check and members) was removed');

    // Fixed, it is created on the next attempt with a fresh pool.
    mockApi('POST', '/api/v1/virtual-services/', { status: 201, body: { id: 9, name: 'shop' } });
    await fill(user, vip, '10.77.100.21');
    await next(user);
    await next(user);
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));
    expect(await screen.findByRole('heading', { name: 'Service page' })).toBeInTheDocument();
    expect(writes().filter((call) => call.path === '/api/v1/pools/')).toHaveLength(2);
  });

  it('deletes the pool it made when a member is refused, and shows why next to that member', async () => {
    mockCreation();
    let members = 0;
    mockApi('POST', '/api/v1/members/', () =>
      ++members === 2 ? { status: 400, body: { address: ['10.77.2.12 is the VIP of virtual service old.'] } } : { status: 201, body: { id: 71 } },
    );
    const { user } = renderWizard();
    await webUpToReview(user);
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));

    const row = await screen.findByRole('group', { name: 'Member 2' });
    expect(within(row).getByRole('textbox', { name: 'Address' })).toHaveAccessibleDescription(/is the VIP of virtual service old/);
    expect(writes().map((call) => `${call.method} ${call.path}`)).toEqual([
      'POST /api/v1/pools/',
      'POST /api/v1/health-checks/',
      'POST /api/v1/members/',
      'POST /api/v1/members/',
      'DELETE /api/v1/pools/7/',
    ]);
    expect(screen.getByRole('alert')).toHaveTextContent(/refused a member \(s2\).*pool shop .* was removed/);
  });

  it('says what it could not remove when the clean-up fails too', async () => {
    mockCreation({ service: { status: 400, body: { name: ['virtual service with this name already exists.'] } } });
    mockApi('DELETE', '/api/v1/pools/7/', { status: 409, body: { detail: 'The pool is in use.' } });
    const { user } = renderWizard();
    await webUpToReview(user);
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));
    expect(await screen.findByRole('textbox', { name: 'Name' })).toHaveAccessibleDescription(/already exists/);
    expect(screen.getByRole('alert')).toHaveTextContent('Could not remove pool shop (with its health check and members): The pool is in use.');
  });

  it('names a certificate to generate after the service when Generate is picked over a stored one', async () => {
    const { user } = renderWizard();
    await chooseKind(user, /^Web over HTTPS/);
    await fillListener(user);
    await fillMember(user, 0, { address: '10.77.2.11' });
    await next(user);
    expect(await screen.findByRole('heading', { name: 'Step 4 of 5: Certificate' })).toHaveFocus();
    expect(screen.getByRole('radio', { name: 'Use a stored certificate' })).toBeChecked();
    await user.click(screen.getByRole('radio', { name: 'Generate a self-signed certificate' }));
    expect(screen.getByRole('textbox', { name: 'Certificate name' })).toHaveValue('shop');
  });

  it('generates a self-signed certificate first for HTTPS, and removes it too when the service is refused', async () => {
    mockCreation({ service: { status: 400, body: { port: ['443 is taken.'] } } });
    mockApi('POST', '/api/v1/certificates/generate/', { status: 201, body: { id: 30, name: 'shop' } });
    mockApi('DELETE', '/api/v1/certificates/30/', { status: 204 });
    const { user } = renderWizard({ certificates: [] });
    await chooseKind(user, /^Web over HTTPS/);
    await fillListener(user);
    await fillMember(user, 0, { address: '10.77.2.11' });
    await next(user);
    expect(await screen.findByRole('heading', { name: 'Step 4 of 5: Certificate' })).toHaveFocus();
    expect(screen.getByRole('radio', { name: 'Generate a self-signed certificate' })).toBeChecked();
    expect(screen.getByRole('textbox', { name: 'Certificate name' })).toHaveValue('shop');
    await next(user);
    expect(screen.getByRole('textbox', { name: 'Common name' })).toHaveAccessibleDescription(/Enter the common name/);
    await user.type(screen.getByRole('textbox', { name: 'Common name' }), 'shop.example.test');
    await next(user);
    expect(await screen.findByRole('heading', { name: 'Step 5 of 5: Review and create' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Create virtual service' }));

    expect(await screen.findByRole('spinbutton', { name: 'Port' })).toHaveAccessibleDescription('443 is taken.');
    expect(writes()[0]).toEqual({
      method: 'POST',
      path: '/api/v1/certificates/generate/',
      body: { name: 'shop', common_name: 'shop.example.test', key_type: 'ecdsa-p256', days: 365 },
    });
    expect(writes().find((call) => call.path === '/api/v1/virtual-services/')?.body).toMatchObject({ protocol: 'https', port: 443, default_certificate: 30 });
    expect(writes().slice(-2).map((call) => `${call.method} ${call.path}`)).toEqual(['DELETE /api/v1/pools/7/', 'DELETE /api/v1/certificates/30/']);
  });

  it('offers only certificates with a key, and requires one', async () => {
    const { user } = renderWizard();
    await chooseKind(user, /^Web over HTTPS/);
    await fillListener(user);
    await fillMember(user, 0, { address: '10.77.2.11' });
    await next(user);
    await screen.findByRole('heading', { name: /Certificate$/ });
    expect(screen.getByRole('radio', { name: 'Use a stored certificate' })).toBeChecked();
    const select = screen.getByRole('combobox', { name: 'Stored certificate' });
    expect(within(select).getAllByRole('option').map((o) => o.textContent)).toEqual(['Choose a certificate…', 'www']);
    await next(user);
    expect(select).toHaveAccessibleDescription('Choose the certificate the service presents.');
  });

  it('uses an existing pool without creating one', async () => {
    mockApi('POST', '/api/v1/virtual-services/', { status: 201, body: { id: 9, name: 'shop' } });
    const { user } = renderWizard();
    await chooseKind(user, /^Web \(HTTP/);
    await fillListener(user);
    await user.click(screen.getByRole('radio', { name: 'Use an existing pool' }));
    await next(user);
    expect(screen.getByRole('combobox', { name: 'Existing pool' })).toHaveAccessibleDescription(/Choose the pool/);
    await user.selectOptions(screen.getByRole('combobox', { name: 'Existing pool' }), 'legacy');
    await next(user);
    await user.click(await screen.findByRole('button', { name: 'Create virtual service' }));
    await screen.findByRole('heading', { name: 'Service page' });
    expect(writes()).toEqual([
      {
        method: 'POST',
        path: '/api/v1/virtual-services/',
        body: { name: 'shop', vip: '10.77.100.20', port: 80, forwarding: 'proxy', protocol: 'http', default_pool: 3, enabled: true },
      },
    ]);
  });

  it('defaults layer 4 to weighted least connections and a TCP check, and keeps the port for direct routing', async () => {
    const { user } = renderWizard();
    await chooseKind(user, /^TCP\/UDP/);
    await user.selectOptions(screen.getByRole('combobox', { name: 'Forwarding' }), 'direct-routing');
    await fillListener(user, { port: '5432' });
    expect(screen.getByRole('combobox', { name: 'Algorithm' })).toHaveValue('least-connections');
    expect(screen.getByRole('combobox', { name: 'Health check' })).toHaveValue('tcp');
    expect(screen.queryByRole('textbox', { name: 'Path' })).not.toBeInTheDocument();
    const row = screen.getByRole('group', { name: 'Member 1' });
    expect(within(row).getByRole('spinbutton', { name: 'Port' })).toHaveValue(5432);
    await user.selectOptions(screen.getByRole('combobox', { name: 'Algorithm' }), 'dynamic-least-load');
    expect(screen.getByRole('combobox', { name: 'Algorithm' })).toHaveAccessibleDescription(/fulcrum-loadd/);

    await fillMember(user, 0, { address: '10.77.2.11', port: '6432' });
    await next(user);
    expect(within(row).getByRole('spinbutton', { name: 'Port' })).toHaveAccessibleDescription('Direct routing and tunnel keep the port: use 5432.');
  });

  it.each(['viewer', 'operator'] as const)('tells a %s that creating needs the admin role, with no wizard', async (role) => {
    const { queryClient } = renderWizard({ role });
    await waitFor(() => expect(queryClient.getQueryData(queryKeys.me)).toMatchObject({ role }));
    expect(await screen.findByText('Creating virtual services needs the admin role')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Next' })).not.toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Use the full form instead' })).not.toBeInTheDocument();
  });
});
