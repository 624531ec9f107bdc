import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { Pending } from '../types';
import { PendingChanges } from './PendingChanges';

function answer(body: Pending) {
  mockApi('GET', '/api/v1/revisions/pending/', { status: 200, body });
}

describe('PendingChanges', () => {
  it('lists each object with its kind, name, change and fields old → new', async () => {
    answer({
      pending: true,
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
      pending: true,
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

  it('says when there is nothing to apply', async () => {
    answer({ pending: false, base_revision: 4, objects: [] });
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
