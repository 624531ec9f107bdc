import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { nodeResult, revision as listed } from '../test/fixtures';
import type { Revision } from '../types';
import { RevisionHistory } from './RevisionHistory';

const at = '2026-11-22T10:00:00Z';

function revision(number: number, states: ('pending' | 'applied' | 'failed')[], live: boolean): Revision {
  const nodes = states.map((state, i) => ({ node: `lb${i + 1}`, state, message: '', problems: [], running_revision: null, updated_at: at }));
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

  it('links each revision, the revision a rollback restores, and says why a node failed', async () => {
    const revisions = [
      listed(9, { rollback_of: 2, message: 'automatic rollback: r8 not confirmed within 60 s', author: null as unknown as string }),
      listed(8, { confirm_state: 'rolled-back', confirm_within_s: 60, nodes: [nodeResult({ running_revision: 9 })] }),
      listed(7, { live: false, nodes: [nodeResult({ state: 'failed', message: 'haproxy -c: bind 10.0.0.1:80 failed', running_revision: 6 })] }),
    ];
    mockApi('GET', '/api/v1/revisions/', (request) => {
      const number = new URL(request.url).searchParams.get('number');
      return { status: 200, body: page(number === '2' ? [listed(2)] : revisions) };
    });
    renderWithProviders(<RevisionHistory />);
    const table = await screen.findByRole('table', { name: 'Revision history' });
    const row = (number: number) => within(table).getByRole('row', { name: new RegExp(`^#${number}`) });
    expect(within(row(9)).getByRole('link', { name: '#9' })).toHaveAttribute('href', '/revisions/109');
    expect(await within(row(9)).findByRole('link', { name: 'restores #2' })).toHaveAttribute('href', '/revisions/102');
    expect(row(9)).toHaveTextContent('system');
    expect(row(8)).toHaveTextContent('rolled back');
    expect(row(7)).toHaveTextContent('failed runs #6haproxy -c: bind 10.0.0.1:80 failed');
    expect(row(9)).toHaveTextContent('running now');
    expect(row(8)).not.toHaveTextContent('running now');
  });
});
