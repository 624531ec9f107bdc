import { render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router-dom';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RouteError } from './RouteError';

function Broken(): never {
  throw new Error('cannot read properties of undefined (reading "members")');
}

describe('RouteError', () => {
  afterEach(() => vi.restoreAllMocks());

  it('says what broke, in an alert, and offers a reload and the way to the dashboard', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {}); // React reports the throw; expected here
    const router = createMemoryRouter([{ path: '/pools/3', element: <Broken />, errorElement: <RouteError /> }], { initialEntries: ['/pools/3'] });
    render(<RouterProvider router={router} />);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Something went wrong on this page.');
    expect(alert).toHaveTextContent('reading "members"');
    expect(screen.getByRole('heading', { level: 1, name: 'Error' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Reload the page' })).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go to the dashboard' })).toHaveAttribute('href', '/');
  });
});
