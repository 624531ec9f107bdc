import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { Revision } from '../types';
import { RevisionHistory } from './RevisionHistory';

const at = '2026-11-22T10:00:00Z';

function revision(number: number, states: ('pending' | 'applied' | 'failed')[], live: boolean): Revision {
  const nodes = states.map((state, i) => ({ node: `lb${i + 1}`, state, message: '', running_revision: null, updated_at: at }));
  return { id: number, number, message: `r${number}`, author: 'admin', created_at: at, rollback_of: null, confirm_by: null, confirm_state: 'none', confirm_problem: '', nodes, live };
}

describe('RevisionHistory', () => {
  it('says whether each revision is live on every node', async () => {
    const revisions = [revision(14, ['applied', 'pending'], false), revision(13, ['applied', 'failed'], false), revision(12, ['applied', 'applied'], true)];
    mockApi('GET', '/api/v1/revisions/', { status: 200, body: page(revisions) });
    renderWithProviders(<RevisionHistory />);
    const table = await screen.findByRole('table', { name: 'Revision history' });
    const row = (number: number) => within(table).getByRole('row', { name: new RegExp(`^#${number}`) });
    expect(row(14)).toHaveTextContent('rolling out');
    expect(row(13)).toHaveTextContent('not on every node');
    expect(row(12)).toHaveTextContent('on every node');
    expect(row(12)).not.toHaveTextContent('not on every node');
  });
});
