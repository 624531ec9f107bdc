import { screen, within } from '@testing-library/react';
import { Route, Routes } from 'react-router-dom';
import { describe, expect, it } from 'vitest';
import type { Role } from '@/features/auth';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { sessionLoaded, signedInAs } from '@/test/session';
import { revision } from '../test/fixtures';
import type { RevisionDiff } from '../types';
import { RevisionDetailPage } from './RevisionDetailPage';

const HAPROXY_DIFF = [
  '--- r6/haproxy.cfg',
  '+++ r7/haproxy.cfg',
  '@@ -10,3 +10,3 @@',
  ' backend web',
  '-    server s1 10.0.0.1:80 check',
  '+    server s2 10.0.0.2:80 check',
  '',
].join('\n');

function diffFrom(from: number): RevisionDiff {
  return {
    from_revision: from,
    to_revision: 7,
    count: 1,
    summary: { added: 0, changed: 1, removed: 0 },
    objects: [{ path: 'pools/web', change: 'changed', fields: [{ field: 'members/s1/address', old: '10.0.0.1', new: '10.0.0.2', default: false }] }],
    files: [
      { node: 'lb1', file: 'haproxy.cfg', change: 'changed', diff: HAPROXY_DIFF },
      { node: 'lb1', file: 'certs/www.pem', change: 'changed', diff: '(a certificate bundle with a private key: its content is not shown)\n' },
    ],
    problems: [],
  };
}

const diffQueries: (string | null)[] = [];

function renderPage(role: Role) {
  signedInAs(role);
  diffQueries.length = 0;
  mockApi('GET', '/api/v1/revisions/107/', { status: 200, body: revision(7, { message: 'move web to s2' }) });
  mockApi('GET', '/api/v1/revisions/', { status: 200, body: page([8, 7, 6, 5, 3].map((n) => revision(n))) });
  mockApi('GET', '/api/v1/revisions/107/diff/', (request) => {
    const from = new URL(request.url).searchParams.get('from');
    diffQueries.push(from);
    return { status: 200, body: diffFrom(from ? Number(from) : 6) };
  });
  return renderWithProviders(
    <Routes>
      <Route path="/revisions/:id" element={<RevisionDetailPage />} />
    </Routes>,
    { path: '/revisions/107' },
  );
}

describe('RevisionDetailPage', () => {
  it("shows what the revision changed: objects and each node's files as a line diff", async () => {
    renderPage('operator');
    expect(await screen.findByRole('heading', { level: 1, name: 'Revision 7' })).toBeInTheDocument();
    expect(await screen.findByText('Revision 7 compared with revision 6: 1 object (1 changed) and 2 files changed.')).toBeInTheDocument();

    const fields = screen.getByRole('table', { name: 'Fields of pool web' });
    const row = within(fields).getByRole('row', { name: /^Member s1: address/ });
    expect(within(row).getAllByRole('cell').map((c) => c.textContent)).toEqual(['10.0.0.1', '10.0.0.2']);

    const node = screen.getByRole('region', { name: 'Node lb1' });
    const diff = within(node).getByLabelText('haproxy.cfg on lb1');
    const line = (text: string) => within(diff).getByText(text, { exact: false, normalizer: (s) => s });
    expect(line('-    server s1 10.0.0.1:80 check')).toHaveClass('diff-del');
    expect(line('+    server s2 10.0.0.2:80 check')).toHaveClass('diff-add');
    expect(line('@@ -10,3 +10,3 @@')).toHaveClass('diff-hunk');
    expect(line(' backend web')).toHaveClass('diff-context');
    expect(within(node).getByText('haproxy.cfg on lb1: 1 line added, 1 removed')).toBeInTheDocument();
    expect(within(node).getByLabelText('certs/www.pem on lb1')).toHaveTextContent('its content is not shown');
  });

  it('compares with another revision chosen in the selector', async () => {
    const { user } = renderPage('viewer');
    const compare = await screen.findByRole('combobox', { name: 'Compare with' });
    await within(compare).findByRole('option', { name: 'Revision 3' });
    expect(within(compare).getAllByRole('option').map((o) => o.textContent)).toEqual([
      'The previous revision',
      'Revision 6 (the previous one)',
      'Revision 5',
      'Revision 3',
    ]);
    await user.selectOptions(compare, 'Revision 3');
    expect(await screen.findByText(/compared with revision 3:/)).toBeInTheDocument();
    expect(diffQueries).toEqual([null, '3']);
  });

  it('rolls back after a confirmation that says a new revision restores this one', async () => {
    mockApi('POST', '/api/v1/revisions/107/rollback/', { status: 201, body: revision(9, { rollback_of: 7, message: 'rollback to r7' }) });
    mockApi('GET', '/api/v1/revisions/109/', { status: 200, body: revision(9, { rollback_of: 7, message: 'rollback to r7' }) });
    const { user } = renderPage('operator');
    await user.click(await screen.findByRole('button', { name: 'Roll back to this revision' }));
    const ask = screen.getByRole('group', { name: 'Roll back to revision 7' });
    expect(ask).toHaveTextContent('This publishes a new revision that restores the objects of revision 7');
    expect(apiCalls.some((c) => c.method === 'POST')).toBe(false);

    await user.click(within(ask).getByRole('button', { name: 'Yes, roll back to revision 7' }));
    expect(await screen.findByText('Revision 9 is applied on every node')).toBeInTheDocument();
    expect(apiCalls.find((c) => c.method === 'POST')).toEqual({ method: 'POST', path: '/api/v1/revisions/107/rollback/', body: {} });
  });

  it('shows why a rollback was refused, per object path', async () => {
    mockApi('POST', '/api/v1/revisions/107/rollback/', {
      status: 400,
      body: { detail: 'Not rolled back.', problems: [{ path: 'certificates/site', message: 'certificate ab:cd is no longer stored' }] },
    });
    const { user } = renderPage('admin');
    await user.click(await screen.findByRole('button', { name: 'Roll back to this revision' }));
    await user.click(screen.getByRole('button', { name: 'Yes, roll back to revision 7' }));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Not rolled back: Not rolled back.');
    expect(within(alert).getByRole('listitem')).toHaveTextContent('certificates/sitecertificate ab:cd is no longer stored');
  });

  it('gives a viewer no rollback', async () => {
    const { queryClient } = renderPage('viewer');
    expect(await screen.findByRole('heading', { level: 1, name: 'Revision 7' })).toBeInTheDocument();
    await sessionLoaded(queryClient);
    expect(screen.queryByRole('button', { name: 'Roll back to this revision' })).not.toBeInTheDocument();
    expect(screen.queryByRole('region', { name: 'Roll back' })).not.toBeInTheDocument();
  });
});
