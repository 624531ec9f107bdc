import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import { createMemoryRouter, matchRoutes, type RouteObject, RouterProvider } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import { mockApi, page } from '@/test/mockApi';
import { NAV_GROUPS } from './navigation';
import { hasTitle, titleFor } from './pageTitle';
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
    mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: 'admin', is_superuser: true, role: 'admin' } });
    mockApi('GET', '/api/v1/virtual-services/', { status: 200, body: page([]) });
    mockApi('GET', '/api/v1/pools/', { status: 200, body: page([]) });
    renderAt('/services');
    expect(await screen.findByRole('heading', { name: 'Virtual services' })).toBeInTheDocument();
    expect(await screen.findByText('No virtual services yet')).toBeInTheDocument();
    const nav = screen.getByRole('navigation', { name: 'Main' });
    for (const name of ['Virtual services', 'Pools', 'Certificates', 'Apply & history', 'Nodes', 'High availability']) {
      expect(nav).toContainElement(screen.getByRole('link', { name }));
    }
  });

  it('answers an unknown address with a way back', async () => {
    mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: 'admin', is_superuser: true, role: 'admin' } });
    renderAt('/nowhere');
    expect(await screen.findByRole('heading', { name: 'Page not found' })).toBeInTheDocument();
    expect(screen.getByText('/nowhere')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go to the dashboard' })).toHaveAttribute('href', '/');
    expect(screen.getByRole('link', { name: 'Go to virtual services' })).toHaveAttribute('href', '/services');
    expect(document.title).toBe('Page not found · Fulcrum');
  });
});

/** The deepest route `path` reaches; '*' means the not-found page. */
function routeOf(path: string): string | undefined {
  const route = matchRoutes(routes, path)?.at(-1)?.route;
  return route?.index ? '' : route?.path;
}

function allRoutes(list: RouteObject[]): RouteObject[] {
  return list.flatMap((route) => [route, ...allRoutes(route.children ?? [])]);
}

describe('no link leads nowhere', () => {
  it('every page of the navigation, and the account page, has a route', () => {
    const targets = [...NAV_GROUPS.flatMap((group) => group.items.map((item) => item.to)), '/account', '/sign-in'];
    expect(targets).toHaveLength(12);
    for (const to of targets) expect(routeOf(to), to).not.toBe('*');
  });

  it('detail and form pages linked from the lists have routes', () => {
    for (const to of ['/services/new', '/services/new/full', '/services/7', '/services/7/edit', '/pools/new', '/pools/3', '/revisions/12']) {
      expect(routeOf(to), to).not.toBe('*');
    }
    expect(routeOf('/pools/3/nothing')).toBe('*');
  });

  it('every route names the browser tab', () => {
    const pages = allRoutes(routes).filter((route) => route.element && (route.index || route.path));
    expect(pages.length).toBeGreaterThanOrEqual(18);
    for (const route of pages) expect(hasTitle(route), route.path ?? 'index').toBe(true);
    expect(titleFor(matchRoutes(routes, '/pools/3') ?? [])).toBe('Pool · Fulcrum');
    expect(titleFor(matchRoutes(routes, '/') ?? [])).toBe('Dashboard · Fulcrum');
  });
});
