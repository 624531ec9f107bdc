import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { apiCalls, mockApi } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { Revision } from '../types';
import { ApplyPanel } from './ApplyPanel';

const at = '2026-11-22T10:00:00Z';

function revision(state: 'pending' | 'applied' | 'failed', message = ''): Revision {
  return { id: 9, number: 4, message: 'add web', author: 'admin', created_at: at, rollback_of: null, confirm_by: null, confirm_state: 'none', confirm_problem: '', nodes: [{ node: 'lb1', state, message, problems: [], running_revision: state === 'applied' ? 4 : 3, updated_at: at }], live: state === 'applied' };
}

describe('ApplyPanel', () => {
  it('applies with a message, then follows the node from pending to applied', async () => {
    mockApi('POST', '/api/v1/revisions/', { status: 201, body: revision('pending') });
    let polls = 0;
    mockApi('GET', '/api/v1/revisions/9/', () => ({ status: 200, body: revision(++polls < 2 ? 'pending' : 'applied') }));
    const { user } = renderWithProviders(<ApplyPanel />);

    await user.type(screen.getByRole('textbox', { name: 'Message' }), 'add web');
    await user.click(screen.getByRole('button', { name: 'Apply' }));

    const result = await screen.findByRole('region', { name: /Revision 4/ });
    expect(within(result).getByRole('row', { name: /^lb1/ })).toHaveTextContent('pending');
    expect(apiCalls[0]).toEqual({ method: 'POST', path: '/api/v1/revisions/', body: { message: 'add web', force: false } });

    expect(await within(result).findByText('Revision 4 is applied on every node', {}, { timeout: 5000 })).toBeInTheDocument();
    expect(within(result).getByRole('row', { name: /^lb1/ })).toHaveTextContent('applied');
    expect(screen.getByRole('textbox', { name: 'Message' })).toHaveValue('');
  });

  it("shows a node's failure with its message", async () => {
    const failed = revision('failed', 'reload failed: bind 10.0.0.1:80');
    mockApi('POST', '/api/v1/revisions/', { status: 201, body: failed });
    mockApi('GET', '/api/v1/revisions/9/', { status: 200, body: failed });
    const { user } = renderWithProviders(<ApplyPanel />);
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    const result = await screen.findByRole('region', { name: /Revision 4/ });
    expect(within(result).getByRole('alert')).toHaveTextContent('Revision 4 failed on 1 node');
    expect(within(result).getByRole('row', { name: /^lb1/ })).toHaveTextContent('reload failed: bind 10.0.0.1:80');
  });

  it('publishes nothing when nothing is pending, then the same configuration again if asked', async () => {
    let forced = false;
    mockApi('POST', '/api/v1/revisions/', async (request) => {
      forced = ((await request.json()) as { force?: boolean }).force === true;
      return forced
        ? { status: 201, body: revision('pending') }
        : { status: 409, body: { detail: 'nothing to apply: the configuration is the same as revision 3', code: 'nothing_to_apply', base_revision: 3 } };
    });
    mockApi('GET', '/api/v1/revisions/9/', { status: 200, body: revision('applied') });
    const { user } = renderWithProviders(<ApplyPanel />);
    await user.type(screen.getByRole('textbox', { name: 'Message' }), 'push again');
    await user.click(screen.getByRole('button', { name: 'Apply' }));

    const said = await screen.findByRole('status');
    expect(said).toHaveTextContent('Nothing to apply');
    expect(said).toHaveTextContent('The objects are the same as in revision 3, the last one applied. No revision was published.');
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
    await user.click(within(said).getByRole('button', { name: 'Publish the same configuration again' }));
    expect(await screen.findByRole('region', { name: /Revision 4/ })).toBeInTheDocument();
    expect(apiCalls.filter((c) => c.method === 'POST').map((c) => c.body)).toEqual([
      { message: 'push again', force: false },
      { message: 'push again', force: true },
    ]);
    expect(screen.queryByText('Nothing to apply')).not.toBeInTheDocument();
  });

  it('lists the problems of a refused apply, per object', async () => {
    const said = 'ALERT: config : parsing [<check>/haproxy.cfg:2] : unknown keyword';
    mockApi('POST', '/api/v1/revisions/', {
      status: 400,
      body: {
        detail: 'Not published.',
        problems: [
          { path: 'pools/web/members/s1/port', message: '0 is outside 1..65535', object: 'pool', name: 'web', id: 3, field: 'members/s1/port', daemon: null, node: null, daemon_message: null },
          { path: 'nodes/lb1/haproxy', message: `haproxy rejected the configuration: ${said}`, object: 'node', name: 'lb1', id: 1, field: 'haproxy', daemon: 'haproxy', node: 'lb1', daemon_message: said },
        ],
        daemon_output: said,
      },
    });
    const { user } = renderWithProviders(<ApplyPanel />);
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Not applied: Not published.');
    const items = within(alert).getAllByRole('listitem');
    expect(items).toHaveLength(2);
    expect(items[0]).toHaveTextContent('Pool webmembers/s1/port0 is outside 1..65535');
    expect(within(items[0]!).getByRole('link', { name: 'Pool web' })).toHaveAttribute('href', '/pools/3');
    expect(items[1]).toHaveTextContent(`haproxy on lb1 said: ${said}`);
    expect(within(items[1]!).getByRole('link', { name: 'Node lb1' })).toHaveAttribute('href', '/nodes');
    expect(screen.queryByRole('region', { name: /Revision/ })).not.toBeInTheDocument();
  });

  it('says when no node will run the revision', async () => {
    const nowhere = { ...revision('applied'), nodes: [], live: false };
    mockApi('POST', '/api/v1/revisions/', { status: 201, body: nowhere });
    mockApi('GET', '/api/v1/revisions/9/', { status: 200, body: nowhere });
    const { user } = renderWithProviders(<ApplyPanel />);
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    expect(await screen.findByText('Revision 4 is stored, but no node runs it')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Add a node' })).toHaveAttribute('href', '/nodes');
  });

  it('applies with confirm in a chosen window, refusing a window the API would refuse', async () => {
    const awaiting = { ...revision('applied'), confirm_state: 'awaiting' as const, confirm_within_s: 45, confirm_by: at };
    mockApi('POST', '/api/v1/revisions/', { status: 201, body: awaiting });
    mockApi('GET', '/api/v1/revisions/9/', { status: 200, body: awaiting });
    const { user } = renderWithProviders(<ApplyPanel />);
    expect(screen.queryByRole('combobox', { name: 'Confirm within' })).not.toBeInTheDocument();
    await user.click(screen.getByRole('checkbox', { name: 'Apply with confirm' }));
    const within_ = screen.getByRole('combobox', { name: 'Confirm within' });
    expect(within(within_).getAllByRole('option').map((o) => o.textContent)).toEqual(['1 minute', '5 minutes', '10 minutes', '30 minutes', 'Other (seconds)']);
    await user.selectOptions(within_, 'Other (seconds)');
    await user.type(screen.getByRole('textbox', { name: 'Seconds' }), '5');
    await user.click(screen.getByRole('button', { name: 'Apply with confirm' }));
    expect(await screen.findByText('A whole number of seconds from 10 to 3600.')).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Seconds' })).toHaveAccessibleDescription(/A whole number of seconds from 10 to 3600\./);
    expect(apiCalls).toHaveLength(0);

    await user.type(screen.getByRole('textbox', { name: 'Seconds' }), '4');
    await user.click(screen.getByRole('button', { name: 'Apply with confirm' }));
    expect(await screen.findByRole('region', { name: /Revision 4/ })).toBeInTheDocument();
    expect(apiCalls[0]).toEqual({ method: 'POST', path: '/api/v1/revisions/', body: { message: '', force: false, confirm_within_s: 54 } });
  });

  it('sends a preset window in seconds', async () => {
    mockApi('POST', '/api/v1/revisions/', { status: 201, body: revision('applied') });
    mockApi('GET', '/api/v1/revisions/9/', { status: 200, body: revision('applied') });
    const { user } = renderWithProviders(<ApplyPanel />);
    await user.click(screen.getByRole('checkbox', { name: 'Apply with confirm' }));
    await user.selectOptions(screen.getByRole('combobox', { name: 'Confirm within' }), '10 minutes');
    await user.click(screen.getByRole('button', { name: 'Apply with confirm' }));
    await screen.findByRole('region', { name: /Revision 4/ });
    expect(apiCalls[0]?.body).toEqual({ message: '', force: false, confirm_within_s: 600 });
  });
});
