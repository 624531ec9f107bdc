import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { createMemoryRouter, RouterProvider, useParams } from 'react-router-dom';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PageHeader } from '@/components';
import { queryKeys } from '@/lib/queryKeys';
import { mockApi } from '@/test/mockApi';
import { signedInAs } from '@/test/session';
import { AppShell } from './AppShell';
import { syncDocumentTitle } from './pageTitle';

function Page() {
  const { '*': rest } = useParams();
  return <PageHeader title={`Page ${rest || 'home'}`} />;
}

/** The shell around a stand-in page, so only the shell's own API calls (who am I, is this appliance read-only) are made. */
function renderShell(path = '/services') {
  const router = createMemoryRouter([{ element: <AppShell />, children: [{ path: '*', element: <Page /> }] }], { initialEntries: [path] });
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const user = userEvent.setup();
  render(
    <QueryClientProvider client={client}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
  return { router, user, client };
}

const navLinks = () =>
  within(screen.getByRole('navigation', { name: 'Main' }))
    .getAllByRole('link')
    .map((link) => link.textContent);

/** The role badge of the user area once the session has loaded ("Role: " is for screen readers). */
const roleShown = (role: string) => screen.findByText((_, element) => !!element?.classList.contains('badge') && element.textContent === `Role: ${role}`);

afterEach(() => {
  localStorage.clear();
  document.documentElement.removeAttribute('data-theme');
});

describe('AppShell navigation', () => {
  it('shows an admin every page, grouped', async () => {
    signedInAs('admin', 'alice');
    renderShell();
    expect(await screen.findByText('alice')).toBeInTheDocument();
    expect(navLinks()).toEqual([
      'Dashboard',
      'Virtual services',
      'Pools',
      'Certificates',
      'Apply & history',
      'Audit log',
      'Nodes',
      'High availability',
      'Users',
      'API tokens',
    ]);
    const access = screen.getByRole('group', { name: 'Access' });
    expect(within(access).getByRole('link', { name: 'Users' })).toHaveAttribute('href', '/users');
    expect(await roleShown('admin')).toBeInTheDocument();
  });

  it('keeps the audit log but leaves Users out for an operator', async () => {
    signedInAs('operator');
    renderShell();
    await roleShown('operator');
    expect(navLinks()).toContain('Audit log');
    expect(navLinks()).not.toContain('Users');
  });

  it('leaves Users and the audit log out for a viewer, keeping their account and sign-out', async () => {
    signedInAs('viewer', 'vera');
    renderShell();
    await roleShown('viewer');
    expect(navLinks()).not.toContain('Users');
    expect(navLinks()).not.toContain('Audit log');
    expect(navLinks()).toContain('API tokens');
    expect(screen.getByRole('link', { name: 'Your account' })).toHaveAttribute('href', '/account');
    expect(screen.getByRole('button', { name: 'Sign out' })).toBeInTheDocument();
  });

  it('marks the current page and moves focus to the content on navigation', async () => {
    signedInAs('admin');
    const { user, router } = renderShell('/');
    await roleShown('admin');
    expect(screen.getByRole('link', { name: 'Dashboard' })).toHaveAttribute('aria-current', 'page');
    expect(document.getElementById('main')).not.toHaveFocus();
    await user.click(screen.getByRole('link', { name: 'Pools' }));
    expect(router.state.location.pathname).toBe('/pools');
    expect(screen.getByRole('link', { name: 'Pools' })).toHaveAttribute('aria-current', 'page');
    expect(screen.getByRole('link', { name: 'Dashboard' })).not.toHaveAttribute('aria-current');
    expect(screen.getByRole('main')).toHaveFocus();
  });
});

describe('AppShell menu drawer', () => {
  it('opens with focus inside, closes on Escape and gives focus back to the menu button', async () => {
    signedInAs('admin');
    const { user } = renderShell();
    await roleShown('admin');
    const menu = screen.getByRole('button', { name: 'Menu' });
    expect(menu).toHaveAttribute('aria-expanded', 'false');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();

    await user.click(menu);
    const drawer = screen.getByRole('dialog', { name: 'Menu' });
    expect(drawer).toHaveAttribute('aria-modal', 'true');
    expect(within(drawer).getByRole('button', { name: 'Close menu' })).toHaveFocus();
    expect(document.querySelector('.shell-main')).toHaveAttribute('inert');

    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(menu).toHaveAttribute('aria-expanded', 'false');
    expect(menu).toHaveFocus();
    expect(document.querySelector('.shell-main')).not.toHaveAttribute('inert');
  });

  it('closes with its close button, and on following a link, which focuses the content', async () => {
    signedInAs('admin');
    const { user, router } = renderShell();
    await roleShown('admin');
    const menu = screen.getByRole('button', { name: 'Menu' });
    await user.click(menu);
    await user.click(screen.getByRole('button', { name: 'Close menu' }));
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(menu).toHaveFocus();

    await user.click(menu);
    await user.click(within(screen.getByRole('dialog', { name: 'Menu' })).getByRole('link', { name: 'Nodes' }));
    expect(router.state.location.pathname).toBe('/nodes');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    expect(screen.getByRole('main')).toHaveFocus();
  });
});

describe('AppShell read-only banner', () => {
  const standby = { member_of: 'https://10.0.2.10/', node: 'lb2', read_only: 'standby', primary: 'https://10.0.2.10/' };
  const banner = () => screen.queryByText('This appliance is read-only');

  afterEach(() => {
    vi.useRealTimers();
  });

  it('tops every page of a standby, with the way to the primary', async () => {
    signedInAs('admin');
    mockApi('GET', '/api/v1/cluster/', { status: 200, body: standby });
    renderShell();
    expect(await screen.findByText('This appliance is read-only')).toBeInTheDocument();
    expect(within(screen.getByRole('main')).getByRole('link', { name: 'https://10.0.2.10/' })).toHaveAttribute('href', 'https://10.0.2.10/');
  });

  it('goes once the appliance takes changes again (a standby promoted)', async () => {
    // Only the clock and the polling are faked; fetches and promises run as usual.
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    let membership: Record<string, unknown> = standby;
    mockApi('GET', '/api/v1/cluster/', () => ({ status: 200, body: membership }));
    signedInAs('admin');
    renderShell();
    expect(await screen.findByText('This appliance is read-only')).toBeInTheDocument();

    membership = { ...standby, read_only: null };
    await act(() => vi.advanceTimersByTimeAsync(15_000));
    await waitFor(() => expect(banner()).not.toBeInTheDocument());
  });

  it('is not there on an appliance that takes changes', async () => {
    signedInAs('admin');
    mockApi('GET', '/api/v1/cluster/', { status: 200, body: { member_of: null, node: null, read_only: null, primary: null } });
    const { client } = renderShell();
    await waitFor(() => expect(client.getQueryState(queryKeys.membership)?.status).toBe('success'));
    expect(banner()).not.toBeInTheDocument();
  });
});

describe('theme switch', () => {
  it('applies and remembers the choice, and System follows the OS again', async () => {
    signedInAs('viewer');
    const { user } = renderShell();
    const theme = await screen.findByRole('group', { name: 'Theme' });
    expect(within(theme).getByRole('radio', { name: 'System' })).toBeChecked();
    expect(document.documentElement).not.toHaveAttribute('data-theme');

    await user.click(within(theme).getByRole('radio', { name: 'Dark' }));
    expect(document.documentElement).toHaveAttribute('data-theme', 'dark');
    expect(localStorage.getItem('fulcrum-theme')).toBe('dark');

    await user.click(within(theme).getByRole('radio', { name: 'Light' }));
    expect(document.documentElement).toHaveAttribute('data-theme', 'light');
    expect(localStorage.getItem('fulcrum-theme')).toBe('light');

    await user.click(within(theme).getByRole('radio', { name: 'System' }));
    expect(document.documentElement).not.toHaveAttribute('data-theme');
    expect(localStorage.getItem('fulcrum-theme')).toBeNull();
  });

  it('shows the remembered choice on the next visit', async () => {
    localStorage.setItem('fulcrum-theme', 'dark');
    signedInAs('viewer');
    renderShell();
    expect(await screen.findByRole('radio', { name: 'Dark' })).toBeChecked();
  });
});

describe('page titles', () => {
  it("names the tab after the route as soon as it moves, then after the page's own heading", async () => {
    signedInAs('admin');
    const router = createMemoryRouter(
      [{ element: <AppShell />, children: [{ path: 'pools', element: <p>loading</p> }, { path: 'pools/:id', element: <PageHeader title="Pool web" /> }] }],
      { initialEntries: ['/pools'] },
    );
    const stop = syncDocumentTitle(router);
    render(
      <QueryClientProvider client={new QueryClient()}>
        <RouterProvider router={router} />
      </QueryClientProvider>,
    );
    expect(document.title).toBe('Pools · Fulcrum');
    await act(() => router.navigate('/pools/3'));
    expect(await screen.findByRole('heading', { name: 'Pool web' })).toBeInTheDocument();
    expect(document.title).toBe('Pool web · Fulcrum');
    await act(() => router.navigate('/pools'));
    expect(document.title).toBe('Pools · Fulcrum');
    stop();
  });
});
