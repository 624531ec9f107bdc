import { screen, waitFor, within } from '@testing-library/react';
import { Link, useLocation } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { queryKeys } from '@/lib/queryKeys';
import { apiCalls, mockApi, mockList, page } from '@/test/mockApi';
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

function renderList({ services = SERVICES, role = 'admin' as Role, path = '/services', answer = undefined as ((query: URLSearchParams) => VirtualService[]) | undefined, count = undefined as ((query: URLSearchParams) => number) | undefined } = {}) {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: role, is_superuser: false, role } });
  const queries = mockList('/api/v1/virtual-services/', services, answer, count);
  const rendered = renderWithProviders(
    <>
      <ServicesPage />
      <LocationProbe />
    </>,
    { path },
  );
  return { ...rendered, queries, last: () => Object.fromEntries(queries.at(-1)!) };
}

const table = () => screen.getByRole('table', { name: 'Virtual services' });
const serviceNames = () => within(table()).getAllByRole('rowheader').map((cell) => within(cell).getByRole('link').textContent);
const byName = (...names: string[]) => names.map((name) => SERVICES.find((s) => s.name === name)!);

describe('ServicesPage', () => {
  it('asks the API for the first page by name, and shows it with the count', async () => {
    const { last } = renderList({ answer: () => byName('api', 'dns', 'web') });
    await screen.findByRole('table', { name: 'Virtual services' });
    expect(last()).toEqual({ limit: '100', offset: '0', ordering: 'name' });
    expect(serviceNames()).toEqual(['api', 'dns', 'web']);
    expect(await screen.findByText('3 virtual services')).toHaveAttribute('role', 'status');
    expect(screen.queryByRole('navigation', { name: 'Virtual service pages' })).not.toBeInTheDocument();
  });

  it('searches on the API once typing pauses, announces the count and keeps the filter in the URL', async () => {
    const { user, queries, last } = renderList({
      answer: (query) => (query.get('search') === 'backends' ? byName('api') : query.has('search') ? [] : byName('api', 'dns', 'web')),
    });
    const filter = await screen.findByRole('searchbox', { name: 'Filter virtual services' });
    await screen.findByText('3 virtual services');
    const before = queries.length;
    await user.type(filter, 'backends');
    expect(filter).toHaveValue('backends');
    await waitFor(() => expect(serviceNames()).toEqual(['api']));
    expect(last()).toEqual({ limit: '100', offset: '0', ordering: 'name', search: 'backends' });
    expect(queries.length - before).toBe(1); // one request for the word, not one per key
    expect(screen.getByRole('status')).toHaveTextContent('1 of 3 virtual services');
    expect(screen.getByText(/^Location:/)).toHaveTextContent('?q=backends');

    await user.clear(filter);
    await user.type(filter, 'nothing-like-this');
    expect(await screen.findByText('No virtual service matches “nothing-like-this”')).toBeInTheDocument();
    expect(screen.queryByRole('table')).not.toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent('0 of 3 virtual services');
    await user.click(screen.getByRole('button', { name: 'Clear the filter' }));
    await waitFor(() => expect(serviceNames()).toEqual(['api', 'dns', 'web']));
    expect(filter).toHaveValue('');
    expect(last()).toEqual({ limit: '100', offset: '0', ordering: 'name' });
  });

  it('restores the filter from ?q= on load', async () => {
    const { last } = renderList({ path: '/services?q=resolvers', answer: () => byName('dns') });
    expect(await screen.findByRole('searchbox', { name: 'Filter virtual services' })).toHaveValue('resolvers');
    await screen.findByRole('table', { name: 'Virtual services' });
    expect(last().search).toBe('resolvers');
    expect(serviceNames()).toEqual(['dns']);
    expect(await screen.findByText('1 of 3 virtual services')).toBeInTheDocument();
  });

  it('follows the URL when it changes from outside, as from the menu link', async () => {
    mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: 'admin', is_superuser: false, role: 'admin' } });
    const queries = mockList('/api/v1/virtual-services/', SERVICES, (query) => (query.has('search') ? byName('web') : SERVICES));
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
    await waitFor(() => expect(serviceNames()).toEqual(['web', 'api', 'dns']));
    expect(queries.at(-1)!.has('search')).toBe(false);
  });

  it('sorts on the API by a column, ties by name, says so with aria-sort, and reverses on a second click', async () => {
    const { user, last } = renderList();
    await screen.findByRole('table', { name: 'Virtual services' });
    const header = (name: string) => within(table()).getByRole('columnheader', { name });
    expect(header('Name')).toHaveAttribute('aria-sort', 'ascending');

    await user.click(within(header('Listener')).getByRole('button'));
    expect(header('Listener')).toHaveAttribute('aria-sort', 'ascending');
    expect(header('Name')).not.toHaveAttribute('aria-sort');
    await waitFor(() => expect(last().ordering).toBe('vip,port,name'));
    expect(screen.getByText(/^Location:/)).toHaveTextContent('?sort=listener');

    await user.click(within(header('Listener')).getByRole('button'));
    expect(header('Listener')).toHaveAttribute('aria-sort', 'descending');
    await waitFor(() => expect(last().ordering).toBe('-vip,-port,name'));

    await user.click(within(header('State')).getByRole('button'));
    await waitFor(() => expect(last().ordering).toBe('-enabled,name')); // enabled ones first
    await user.click(within(header('Pool')).getByRole('button'));
    await waitFor(() => expect(last().ordering).toBe('default_pool_name,name'));
    await user.click(within(header('Name')).getByRole('button'));
    await waitFor(() => expect(last().ordering).toBe('name'));
  });

  it('pages through 250 services, and a new filter goes back to the first page', async () => {
    const many = Array.from({ length: 250 }, (_, i) => service(i + 1, `svc-${String(i).padStart(3, '0')}`, '10.1.0.1', 1000 + i, 'http', 1));
    const { user, last } = renderList({
      services: many,
      answer: (query) => many.slice(Number(query.get('offset')), Number(query.get('offset')) + 100),
      count: () => many.length,
    });
    await screen.findByRole('table', { name: 'Virtual services' });
    const pages = screen.getByRole('navigation', { name: 'Virtual service pages' });
    expect(pages).toHaveTextContent('Page 1 of 3');
    expect(within(pages).getByRole('button', { name: 'Previous' })).toBeDisabled();
    expect(within(table()).getAllByRole('row')).toHaveLength(101);

    await user.click(within(pages).getByRole('button', { name: 'Next' }));
    await waitFor(() => expect(serviceNames()[0]).toBe('svc-100'));
    expect(last()).toEqual({ limit: '100', offset: '100', ordering: 'name' });
    expect(screen.getByText(/^Location:/)).toHaveTextContent('?page=2');
    await user.click(within(pages).getByRole('button', { name: 'Next' }));
    await waitFor(() => expect(serviceNames()).toHaveLength(50));
    expect(pages).toHaveTextContent('Page 3 of 3');
    expect(within(pages).getByRole('button', { name: 'Next' })).toBeDisabled();

    await user.type(screen.getByRole('searchbox', { name: 'Filter virtual services' }), 'svc');
    await waitFor(() => expect(last()).toEqual({ limit: '100', offset: '0', ordering: 'name', search: 'svc' }));
    expect(screen.getByText(/^Location:/)).toHaveTextContent('?q=svc');
  });

  it('goes back to the last page when the one asked for is past the end', async () => {
    const many = Array.from({ length: 150 }, (_, i) => service(i + 1, `svc-${String(i).padStart(3, '0')}`, '10.1.0.1', 1000 + i, 'http', 1));
    const { last } = renderList({
      services: many,
      path: '/services?page=3',
      answer: (query) => many.slice(Number(query.get('offset')), Number(query.get('offset')) + 100),
      count: () => many.length,
    });
    await waitFor(() => expect(last().offset).toBe('100'));
    await waitFor(() => expect(serviceNames()).toHaveLength(50));
    expect(screen.getByText(/^Location:/)).toHaveTextContent('?page=2');
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
    await waitFor(() => expect(serviceNames()).toEqual(['web', 'dns'])); // the API's page, in its order
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
});
