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
    expect(within(table).queryByRole('list')).not.toBeInTheDocument();
  });

  it("names the objects a failed node's daemon complained about, linked", () => {
    const said = "bind 10.77.100.10:80: bind: address already in use";
    const problem = { path: 'virtual-services/web/vip', message: `haproxy rejected the configuration: ${said}`, object: 'virtual-service', name: 'web', id: 5, field: 'vip', daemon: 'haproxy', node: 'lb3', daemon_message: said };
    renderWithProviders(
      <NodeResults revisionNumber={7} nodes={[{ node: 'lb3', state: 'failed', message: `haproxy rejected the configuration:\n${said}`, problems: [problem], running_revision: 6, updated_at: at }]} />,
    );
    const row = screen.getByRole('row', { name: /^lb3/ });
    expect(within(row).getByRole('link', { name: 'Virtual service web' })).toHaveAttribute('href', '/services/5');
    expect(within(row).getByRole('listitem')).toHaveTextContent(`Virtual service webviphaproxy on lb3 said: ${said}`);
  });
});
