import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { renderWithProviders } from '@/test/render';
import type { PublishError, PublishProblem } from '../types';
import { ApplyProblems } from './ApplyProblems';

const said =
  "ALERT: config : parsing [<check>/haproxy.cfg:228] : http-error : file '<check>/haproxy.d/pool-web.maintenance.html' exceeds the buffer size (20000 > 16384)";

function problem(fields: Partial<PublishProblem>): PublishProblem {
  return { path: '', message: '', object: null, name: null, id: null, field: '', daemon: null, node: null, daemon_message: null, ...fields };
}

const refused: PublishError = {
  detail: 'Not published.',
  problems: [
    problem({ path: 'pools/web/maintenance_page', message: `haproxy rejected the configuration: ${said}`, object: 'pool', name: 'web', id: 3, field: 'maintenance_page', daemon: 'haproxy', node: 'lb1', daemon_message: said }),
    problem({ path: 'certificates/www', message: 'haproxy rejected the configuration: ALERT: unable to load', object: 'certificate', name: 'www', id: 8, daemon: 'haproxy', node: 'lb1', daemon_message: 'ALERT: unable to load' }),
    problem({ path: 'virtual-services/gone/port', message: '0 is outside 1..65535', object: 'virtual-service', name: 'gone', field: 'port' }),
    problem({ path: 'nodes/lb1/haproxy', message: 'haproxy rejected the configuration: ALERT: global', object: 'node', name: 'lb1', field: 'haproxy', daemon: 'haproxy', node: 'lb1', daemon_message: 'ALERT: global' }),
  ],
  daemon_output: `[NOTICE] haproxy version\n${said}\nALERT: config : Fatal errors found in configuration.`,
};

describe('ApplyProblems', () => {
  it("names each object at fault and its field, linked, and quotes the daemon's words", () => {
    renderWithProviders(<ApplyProblems error={refused} />);
    const alert = screen.getByRole('alert');
    const [page, cert, port, node] = within(alert).getAllByRole('listitem');

    expect(within(page!).getByRole('link', { name: 'Pool web' })).toHaveAttribute('href', '/pools/3');
    expect(within(page!).getByText('maintenance_page')).toBeInTheDocument();
    expect(page).toHaveTextContent(`haproxy on lb1 said: ${said}`);
    expect(page!.querySelector('q')).toHaveTextContent(said);
    expect(page).not.toHaveTextContent('haproxy rejected the configuration');

    // Certificates have no page of their own; an object without an id links to its list.
    expect(within(cert!).getByRole('link', { name: 'Certificate www' })).toHaveAttribute('href', '/certificates');
    expect(within(port!).getByRole('link', { name: 'Virtual service gone' })).toHaveAttribute('href', '/services');
    expect(port).toHaveTextContent('0 is outside 1..65535');
    expect(within(node!).getByRole('link', { name: 'Node lb1' })).toHaveAttribute('href', '/nodes');
  });

  it("keeps everything the daemon said, folded away", async () => {
    const { user } = renderWithProviders(<ApplyProblems error={refused} />);
    const output = screen.getByText(/Fatal errors found in configuration/);
    expect(output).not.toBeVisible();
    await user.click(screen.getByText('Everything haproxy said'));
    expect(output).toBeVisible();
    expect(output).toHaveTextContent('[NOTICE] haproxy version');
  });

  it('shows a path that names no object as it is, and no daemon output when there is none', () => {
    const error: PublishError = { detail: 'Not restored.', problems: [problem({ path: 'widgets', message: 'unknown section' })], daemon_output: null };
    renderWithProviders(<ApplyProblems error={error} title="Not restored" />);
    const [item] = within(screen.getByRole('alert')).getAllByRole('listitem');
    expect(item).toHaveTextContent('widgetsunknown section');
    expect(within(item!).queryByRole('link')).not.toBeInTheDocument();
    expect(screen.queryByText(/said$/)).not.toBeInTheDocument();
  });
});
