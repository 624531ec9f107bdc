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
            { field: 'members/s1/address', old: '10.0.0.1', new: '10.0.0.2' },
            { field: 'members/s3/name', old: null, new: 's3' },
          ],
        },
        { path: 'virtual-services/old', change: 'removed', fields: [{ field: 'port', old: 80, new: null }] },
        { path: 'ha-groups/front', change: 'changed', fields: [{ field: 'auth_pass', old: '(changed)', new: '(changed)' }] },
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
    const address = within(pool).getByRole('row', { name: /^members\/s1\/address/ });
    expect(within(address).getAllByRole('cell').map((c) => c.textContent)).toEqual(['10.0.0.1', '10.0.0.2']);
    const added = within(pool).getByRole('row', { name: /^members\/s3\/name/ });
    expect(within(added).getAllByRole('cell').map((c) => c.textContent)).toEqual(['—', 's3']);

    const secret = within(screen.getByRole('table', { name: 'Fields of ha group front' })).getByRole('row', { name: /^auth_pass/ });
    expect(within(secret).getAllByRole('cell').map((c) => c.textContent)).toEqual(['(changed)', '(changed)']);
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
