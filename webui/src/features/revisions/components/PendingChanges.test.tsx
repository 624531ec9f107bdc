import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { apiCalls, mockApi } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { pendingPage } from '../test/fixtures';
import type { ObjectChange } from '../types';
import { PendingChanges } from './PendingChanges';

function answer({ base_revision: base, objects }: { base_revision: number; objects: ObjectChange[] }) {
  mockApi('GET', '/api/v1/revisions/pending/', (request) => ({ status: 200, body: pendingPage(request, objects, base) }));
}

describe('PendingChanges', () => {
  it('lists each object with its kind, name, change and fields old → new', async () => {
    answer({
      base_revision: 7,
      objects: [
        {
          path: 'pools/web',
          change: 'changed',
          fields: [
            { field: 'members/s1/address', old: '10.0.0.1', new: '10.0.0.2', default: false },
            { field: 'members/s3/name', old: null, new: 's3', default: false },
          ],
        },
        { path: 'virtual-services/old', change: 'removed', fields: [{ field: 'port', old: 80, new: null, default: false }] },
        { path: 'ha-groups/front', change: 'changed', fields: [{ field: 'auth_pass', old: '(changed)', new: '(changed)', default: false }] },
      ],
    });
    renderWithProviders(<PendingChanges />);
    expect(await screen.findByText('3 changes not applied')).toBeInTheDocument();
    expect(screen.getByText(/since revision 7/)).toBeInTheDocument();

    const items = within(screen.getByRole('list', { name: 'Changed objects' })).getAllByRole('listitem');
    expect(items.map((item) => item.querySelector('summary')?.textContent)).toEqual([
      'Pool web changed 2 fields',
      'Virtual service old removed 1 field',
      'HA group front changed 1 field',
    ]);

    const pool = screen.getByRole('table', { name: 'Fields of pool web' });
    const address = within(pool).getByRole('row', { name: /^Member s1: address/ });
    expect(within(address).getAllByRole('cell').map((c) => c.textContent)).toEqual(['10.0.0.1', '10.0.0.2']);
    const added = within(pool).getByRole('row', { name: /^Member s3: name/ });
    expect(within(added).getAllByRole('cell').map((c) => c.textContent)).toEqual(['—', 's3']);

    const secret = within(screen.getByRole('table', { name: 'Fields of ha group front' })).getByRole('row', { name: /^Auth pass/ });
    expect(within(secret).getAllByRole('cell').map((c) => c.textContent)).toEqual(['(changed)', '(changed)']);
  });

  it('names fields in words and folds away those of a new object at their defaults', async () => {
    answer({
      base_revision: 7,
      objects: [
        {
          path: 'virtual-services/shop',
          change: 'added',
          fields: [
            { field: 'vip', old: null, new: '10.0.0.10', default: false },
            { field: 'hsts_max_age_s', old: null, new: 0, default: true },
            { field: 'alpn_h2', old: null, new: true, default: true },
            { field: 'rules/order', old: null, new: ['api'], default: false },
            { field: 'rules/api/pool', old: null, new: 'api', default: false },
          ],
        },
      ],
    });
    renderWithProviders(<PendingChanges />);
    const shown = await screen.findByRole('table', { name: 'Fields of virtual service shop' });
    expect(within(shown).getAllByRole('rowheader').map((cell) => cell.textContent)).toEqual(['VIP', 'Order of the rules', 'Rule api: pool']);
    expect(within(shown).getByRole('rowheader', { name: 'VIP' })).toHaveAttribute('title', 'vip');
    const folded = screen.getByText('2 fields at their defaults').closest('details')!;
    expect(folded).not.toHaveAttribute('open');
    const defaults = within(folded).getByRole('table', { name: 'Fields of virtual service shop, at their defaults' });
    expect(within(defaults).getAllByRole('rowheader').map((cell) => cell.textContent)).toEqual(['HSTS max age (s)', 'ALPN HTTP/2']);
  });

  it('reads a long list a page at a time, counted whole', async () => {
    const pools: ObjectChange[] = Array.from({ length: 120 }, (_, i) => ({
      path: `pools/p${String(i).padStart(3, '0')}`,
      change: i < 100 ? 'added' : 'removed',
      fields: [{ field: 'algorithm', old: null, new: 'round-robin', default: false }],
    }));
    answer({ base_revision: 4, objects: pools });
    renderWithProviders(<PendingChanges />);
    expect(await screen.findByText('120 changes not applied')).toBeInTheDocument();
    expect(screen.getByText(/\(100 added, 20 removed\) since revision 4/)).toBeInTheDocument();
    const items = () => within(screen.getByRole('list', { name: 'Changed objects' })).getAllByRole('listitem');
    expect(items()).toHaveLength(50);
    expect(screen.getByText('50 of 120 shown.')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Show 50 more' }));
    expect(await screen.findByText('100 of 120 shown.')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Show 20 more' }));
    await waitFor(() => expect(items()).toHaveLength(120));
    expect(screen.queryByRole('button', { name: /more$/ })).not.toBeInTheDocument();
    expect(items().map((item) => item.querySelector('strong')?.textContent)).toEqual(pools.map((p) => p.path.slice('pools/'.length)));
    const offsets = apiCalls.filter((c) => c.path === '/api/v1/revisions/pending/').length;
    expect(offsets).toBe(3); // one page each, none read twice
  });

  it('says when there is nothing to apply', async () => {
    answer({ base_revision: 4, objects: [] });
    renderWithProviders(<PendingChanges />);
    expect(await screen.findByText('Nothing to apply')).toBeInTheDocument();
    expect(screen.getByText('The objects are the same as in revision 4, the last one applied.')).toBeInTheDocument();
  });

  it('offers a retry when the changes cannot be read', async () => {
    mockApi('GET', '/api/v1/revisions/pending/', { status: 500, body: { detail: 'database unavailable' } });
    renderWithProviders(<PendingChanges />);
    expect(await screen.findByRole('alert')).toHaveTextContent('database unavailable');
    expect(screen.getByRole('button', { name: 'Try again' })).toBeInTheDocument();
  });
});
