import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderWithProviders } from '@/test/render';
import { NodeResults } from './NodeResults';

const at = '2026-11-22T10:00:00Z';

describe('NodeResults', () => {
  it("shows each node's state and a failure's message", () => {
    renderWithProviders(
      <NodeResults
        revisionNumber={7}
        nodes={[
          { node: 'lb1', state: 'applied', message: '', problems: [], running_revision: 4, updated_at: at },
          { node: 'lb2', state: 'pending', message: '', problems: [], running_revision: 3, updated_at: at },
          { node: 'lb3', state: 'failed', message: 'haproxy -c: unknown keyword', problems: [], running_revision: 3, updated_at: at },
        ]}
      />,
    );
    const table = screen.getByRole('table', { name: 'Node results for revision 7' });
    const row = (node: string) => within(table).getByRole('row', { name: new RegExp(`^${node}`) });
    expect(row('lb1')).toHaveTextContent('applied');
    expect(row('lb2')).toHaveTextContent('pending');
    expect(row('lb2')).toHaveTextContent('Waiting for the agent');
    expect(row('lb3')).toHaveTextContent('failed');
    expect(row('lb3')).toHaveTextContent('haproxy -c: unknown keyword');
    expect(screen.getByRole('status')).toHaveTextContent('3 nodes: 1 applied, 1 failed, 1 pending.');
  });
});
