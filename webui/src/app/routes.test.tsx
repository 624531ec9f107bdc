import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { mockApi, page } from '@/test/mockApi';
import { routes } from './routes';

function renderAt(path: string) {
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
  return router;
}

describe('routes', () => {
  it('sends a signed-out visitor to the sign-in page and back afterwards', async () => {
    mockApi('GET', '/api/v1/auth/me/', { status: 401, body: { detail: 'Authentication credentials were not provided.' } });
    const router = renderAt('/pools');
    expect(await screen.findByRole('heading', { name: 'Sign in' })).toBeInTheDocument();
    expect(router.state.location.pathname).toBe('/sign-in');
    expect(router.state.location.search).toBe('?next=%2Fpools');
  });

  it('shows the console with its navigation to a signed-in user', async () => {
    mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: 'admin', is_superuser: true } });
    mockApi('GET', '/api/v1/virtual-services/', { status: 200, body: page([]) });
    mockApi('GET', '/api/v1/pools/', { status: 200, body: page([]) });
    renderAt('/');
    expect(await screen.findByRole('heading', { name: 'Virtual services' })).toBeInTheDocument();
    expect(await screen.findByText('No virtual services yet')).toBeInTheDocument();
    const nav = screen.getByRole('navigation', { name: 'Main' });
    for (const name of ['Virtual services', 'Pools', 'Certificates', 'Apply & history', 'Nodes', 'High availability']) {
      expect(nav).toContainElement(screen.getByRole('link', { name }));
    }
  });

  it('answers an unknown address with a way back', async () => {
    mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: 'admin', is_superuser: true } });
    renderAt('/nowhere');
    expect(await screen.findByRole('heading', { name: 'Page not found' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go to virtual services' })).toHaveAttribute('href', '/services');
  });
});
