import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { NodesPage } from './NodesPage';

describe('NodesPage', () => {
  it('says so when there are no nodes', async () => {
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([]) });
    renderWithProviders(<NodesPage />);
    expect(await screen.findByText('No nodes yet')).toBeInTheDocument();
  });

  it('shows the new token once, with a copy button', async () => {
    const nodes = [{ id: 1, name: 'lb1', last_seen: null, applied_revision: 0 }];
    mockApi('GET', '/api/v1/nodes/', () => ({ status: 200, body: page(nodes) }));
    mockApi('POST', '/api/v1/nodes/', { status: 201, body: { id: 2, name: 'lb2', last_seen: null, applied_revision: 0, token: 'secret-token-1' } });
    const { user } = renderWithProviders(<NodesPage />);

    expect(await screen.findByRole('rowheader', { name: 'lb1' })).toBeInTheDocument();
    await user.type(screen.getByRole('textbox', { name: 'Node name' }), 'lb2');
    await user.click(screen.getByRole('button', { name: 'Add node' }));

    expect(await screen.findByLabelText('Agent token for lb2')).toHaveTextContent('secret-token-1');
    await user.click(screen.getByRole('button', { name: 'Copy token' }));
    // user-event stands in for the clipboard
    await expect(navigator.clipboard.readText()).resolves.toBe('secret-token-1');
    expect(await screen.findByText('Copied.')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'I have stored the token' }));
    expect(screen.queryByText('secret-token-1')).not.toBeInTheDocument();
    expect(within(screen.getByRole('table', { name: 'Registered nodes' })).getAllByRole('row')).toHaveLength(2);
  });

  it("shows the server's refusal next to the node name", async () => {
    mockApi('GET', '/api/v1/nodes/', { status: 200, body: page([]) });
    mockApi('POST', '/api/v1/nodes/', { status: 400, body: { name: ['node with this name already exists.'] } });
    const { user } = renderWithProviders(<NodesPage />);
    await user.type(screen.getByRole('textbox', { name: 'Node name' }), 'lb1');
    await user.click(screen.getByRole('button', { name: 'Add node' }));
    expect(await screen.findByText('node with this name already exists.')).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Node name' })).toHaveAccessibleDescription(/already exists/);
  });
});
