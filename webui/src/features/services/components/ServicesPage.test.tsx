import { screen, waitFor, within } from '@testing-library/react';
import { Link, useLocation } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { queryKeys } from '@/lib/queryKeys';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { VirtualService } from '../types';
import { ServicesPage } from './ServicesPage';

type Role = 'admin' | 'operator' | 'viewer';

const POOLS = [
  { id: 1, name: 'frontends' },
  { id: 2, name: 'backends' },
  { id: 3, name: 'resolvers' },
];

function service(id: number, name: string, vip: string, port: number, protocol: 'http' | 'https' | 'tcp' | 'udp', pool: number): VirtualService {
  const poolName = POOLS.find((p) => p.id === pool)!.name;
  return { id, name, vip, port, protocol, forwarding: protocol === 'udp' ? 'nat' : 'proxy', default_pool: pool, default_pool_name: poolName, warnings: [] };
}

const SERVICES = [
  service(1, 'web', '10.0.0.10', 443, 'https', 1),
  service(2, 'api', '10.0.0.11', 8080, 'http', 2),
  service(3, 'dns', '10.0.0.12', 53, 'udp', 3),
];
function LocationProbe() {
  return <p>Location: {useLocation().search}</p>;
}

function renderList({ services = SERVICES, role = 'admin' as Role, path = '/services' } = {}) {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: role, is_superuser: false, role } });
  mockApi('GET', '/api/v1/virtual-services/', { status: 200, body: page(services) });
  return renderWithProviders(
    <>
      <ServicesPage />
      <LocationProbe />
    </>,
    { path },
  );
}

const table = () => screen.getByRole('table', { name: 'Virtual services' });
const serviceNames = () => within(table()).getAllByRole('rowheader').map((cell) => within(cell).getByRole('link').textContent);

describe('ServicesPage', () => {
  it('narrows the list as you type, announces the count and keeps the filter in the URL', async () => {
    const { user } = renderList();
    const filter = await screen.findByRole('searchbox', { name: 'Filter virtual services' });
    expect(screen.getByText('3 virtual services')).toHaveAttribute('role', 'status');

    await user.type(filter, 'backends');
    expect(serviceNames()).toEqual(['api']);
    expect(screen.getByRole('status')).toHaveTextContent('1 of 3 virtual services');
    // Copied to the URL once typing pauses.
    await waitFor(() => expect(screen.getByText(/^Location:/)).toHaveTextContent('?q=backends'));

    await user.clear(filter);
    await user.type(filter, '10.0.0.12');
    expect(serviceNames()).toEqual(['dns']);
    await user.clear(filter);
    await user.type(filter, 'HTTP 80');
    expect(serviceNames()).toEqual(['api']); // every word: https matches "http" but not "80"

    await user.clear(filter);
    await user.type(filter, 'nothing-like-this');
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
    expect(screen.getByText('No virtual service matches “nothing-like-this”')).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent('0 of 3 virtual services');
    await user.click(screen.getByRole('button', { name: 'Clear the filter' }));
    expect(serviceNames()).toEqual(['api', 'dns', 'web']);
    expect(filter).toHaveValue('');
  });

  it('restores the filter from ?q= on load', async () => {
    renderList({ path: '/services?q=resolvers' });
    expect(await screen.findByRole('searchbox', { name: 'Filter virtual services' })).toHaveValue('resolvers');
    expect(serviceNames()).toEqual(['dns']);
    expect(screen.getByText('1 of 3 virtual services')).toBeInTheDocument();
  });

  it('follows the URL when it changes from outside, as from the menu link', async () => {
    mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: 'admin', is_superuser: false, role: 'admin' } });
    mockApi('GET', '/api/v1/virtual-services/', { status: 200, body: page(SERVICES) });
    const { user } = renderWithProviders(
      <>
        <Link to="/services">All services</Link>
        <ServicesPage />
      </>,
      { path: '/services?q=web' },
    );
    const filter = await screen.findByRole('searchbox', { name: 'Filter virtual services' });
    await user.type(filter, 'x');
    expect(filter).toHaveValue('webx');
    await user.click(screen.getByRole('link', { name: 'All services' }));
    expect(filter).toHaveValue('');
    expect(serviceNames()).toEqual(['api', 'dns', 'web']);
  });

  it('sorts by a column, says so with aria-sort, and reverses on a second click', async () => {
    const { user } = renderList({ services: [...SERVICES, service(4, 'svc-10', '10.0.0.9', 80, 'tcp', 1), service(5, 'svc-9', '10.0.0.100', 80, 'tcp', 1)] });
    await screen.findByRole('table', { name: 'Virtual services' });
    const header = (name: string) => within(table()).getByRole('columnheader', { name });
    expect(header('Name')).toHaveAttribute('aria-sort', 'ascending');
    expect(serviceNames()).toEqual(['api', 'dns', 'svc-9', 'svc-10', 'web']);

    await user.click(within(header('Listener')).getByRole('button'));
    expect(header('Listener')).toHaveAttribute('aria-sort', 'ascending');
    expect(header('Name')).not.toHaveAttribute('aria-sort');
    expect(serviceNames()).toEqual(['svc-10', 'web', 'api', 'dns', 'svc-9']); // 10.0.0.9 < 10.0.0.10 < … < 10.0.0.100
    expect(screen.getByText(/^Location:/)).toHaveTextContent('?sort=listener');

    await user.click(within(header('Listener')).getByRole('button'));
    expect(header('Listener')).toHaveAttribute('aria-sort', 'descending');
    expect(serviceNames()).toEqual(['svc-9', 'dns', 'api', 'web', 'svc-10']);

    await user.click(within(header('Pool')).getByRole('button'));
    expect(serviceNames()).toEqual(['api', 'svc-9', 'svc-10', 'web', 'dns']); // backends, frontends (by name), resolvers
  });

  it('links each row to the service page and offers Edit and Delete to an admin', async () => {
    renderList();
    await screen.findByRole('table', { name: 'Virtual services' });
    expect(within(table()).getByRole('link', { name: 'web' })).toHaveAttribute('href', '/services/1');
    expect(within(table()).getByRole('link', { name: 'Edit web' })).toHaveAttribute('href', '/services/1/edit');
    expect(within(table()).getByRole('button', { name: 'Delete virtual service web' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'New virtual service' })).toHaveAttribute('href', '/services/new');
  });

  it('deletes a service after confirmation, and says why when the API refuses', async () => {
    const { user } = renderList();
    mockApi('DELETE', '/api/v1/virtual-services/2/', { status: 204 });
    mockApi('DELETE', '/api/v1/virtual-services/1/', { status: 409, body: { detail: 'web is in use.' } });
    await screen.findByRole('table', { name: 'Virtual services' });

    await user.click(within(table()).getByRole('button', { name: 'Delete virtual service api' }));
    mockApi('GET', '/api/v1/virtual-services/', { status: 200, body: page(SERVICES.filter((s) => s.id !== 2)) });
    await user.click(within(table()).getByRole('button', { name: 'Yes, delete: virtual service api' }));
    await waitFor(() => expect(serviceNames()).toEqual(['dns', 'web']));
    expect(apiCalls.filter((call) => call.method === 'DELETE').map((call) => call.path)).toEqual(['/api/v1/virtual-services/2/']);

    await user.click(within(table()).getByRole('button', { name: 'Delete virtual service web' }));
    await user.click(within(table()).getByRole('button', { name: 'Yes, delete: virtual service web' }));
    const webRow = within(table()).getByRole('row', { name: /^web/ });
    expect(await within(webRow).findByRole('alert')).toHaveTextContent('web is in use.');
    expect(within(table()).getByRole('row', { name: /^dns/ })).not.toHaveTextContent('in use');
  });

  it.each<Role>(['viewer', 'operator'])('shows a %s no New, Edit or Delete', async (role) => {
    const { queryClient } = renderList({ role });
    await screen.findByRole('table', { name: 'Virtual services' });
    // The role arrives with /auth/me: only once it is known does "nothing to edit" mean anything.
    await waitFor(() => expect(queryClient.getQueryData(queryKeys.me)).toMatchObject({ role }));
    expect(within(table()).getByRole('link', { name: 'web' })).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'New virtual service' })).not.toBeInTheDocument();
    expect(screen.queryByRole('link', { name: /^Edit/ })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /^Delete/ })).not.toBeInTheDocument();
    expect(within(table()).getAllByRole('columnheader')).toHaveLength(5);
  });

  it('renders 1,000 services and filters them', async () => {
    const many = Array.from({ length: 1000 }, (_, i) =>
      service(i + 1, `svc-${String(i).padStart(4, '0')}`, `10.1.${Math.floor(i / 250)}.${i % 250}`, 80, 'http', 1 + (i % 3)),
    );
    const { user } = renderList({ services: many });
    await screen.findByRole('table', { name: 'Virtual services' });
    expect(within(table()).getAllByRole('row')).toHaveLength(1001);
    expect(screen.getByText('1,000 virtual services')).toBeInTheDocument();

    await user.click(screen.getByRole('searchbox', { name: 'Filter virtual services' }));
    await user.paste('svc-09');
    expect(within(table()).getAllByRole('row')).toHaveLength(101);
    expect(screen.getByText('100 of 1,000 virtual services')).toBeInTheDocument();
    expect(serviceNames()[0]).toBe('svc-0900');
  }, 60_000);
});
