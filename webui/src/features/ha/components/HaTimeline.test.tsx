import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { HaEvent } from '../types';
import { HaTimeline } from './HaTimeline';

function event(id: number, node: string, old_state: HaEvent['old_state'], new_state: HaEvent['new_state'], reason = ''): HaEvent {
  const at = `2026-11-22T10:00:0${id}Z`;
  return { id, node, group: 'front', at, old_state, new_state, priority: 100, reason, received_at: at };
}

describe('HaTimeline', () => {
  it('shows role changes newest first, filters by node and group, and follows new ones', async () => {
    const queries: string[] = [];
    let events = [event(2, 'lb2', 'backup', 'master', 'no advert from the master for 3 intervals'), event(1, 'lb1', 'master', 'fault', 'standby')];
    mockApi('GET', '/api/v1/ha-events/', (request) => {
      const query = new URL(request.url).searchParams;
      queries.push(`${query.get('node') ?? ''}/${query.get('group') ?? ''}`);
      const node = query.get('node');
      return { status: 200, body: page(node ? events.filter((e) => e.node === node) : events) };
    });
    const { user } = renderWithProviders(<HaTimeline nodeNames={['lb1', 'lb2']} groupNames={['front']} />);

    const table = await screen.findByRole('table', { name: 'Role changes, newest first' });
    const [newest, older] = within(table).getAllByRole('row').slice(1);
    expect(newest).toHaveTextContent('lb2frontbackup → master100no advert from the master for 3 intervals');
    expect(older).toHaveTextContent('lb1frontmaster → fault100standby');

    await user.selectOptions(screen.getByRole('combobox', { name: 'Node' }), 'lb1');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Group' }), 'front');
    expect(await within(table).findByRole('row', { name: / lb1 front / })).toBeInTheDocument();
    expect(within(table).queryByRole('row', { name: / lb2 front / })).not.toBeInTheDocument();
    expect(queries).toContain('lb1/front');

    events = [event(3, 'lb1', 'fault', 'backup', 'back in service'), ...events];
    // The timeline refreshes itself every few seconds.
    expect(await within(table).findByText('back in service', {}, { timeout: 5000 })).toBeInTheDocument();
  });

  it('says so when nothing happened yet', async () => {
    mockApi('GET', '/api/v1/ha-events/', { status: 200, body: page([]) });
    renderWithProviders(<HaTimeline nodeNames={[]} groupNames={[]} />);
    expect(await screen.findByText('No role changes')).toBeInTheDocument();
  });
});
