import { screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { apiCalls, mockApi } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { AuditEntry } from '../types';
import { AuditPage } from './AuditPage';

const entry = (fields: Partial<AuditEntry>): AuditEntry => ({
  id: 1,
  time: '2026-11-22T10:00:00Z',
  actor: 'admin',
  token: '',
  address: '192.0.2.1',
  method: 'PATCH',
  path: '/api/v1/pools/3/',
  action: 'update',
  object_type: 'pool',
  object_id: '3',
  object_name: 'web',
  status: 200,
  changes: { algorithm: ['roundrobin', 'leastconn'] },
  related: [],
  body: { algorithm: 'leastconn' },
  detail: '',
  ...fields,
});

type Answer = { count: number; results: AuditEntry[] };

/** Answers the audit list with `answer(query)` and records each query string. */
function mockAudit(answer: (query: URLSearchParams) => Answer) {
  const queries: URLSearchParams[] = [];
  mockApi('GET', '/api/v1/audit/', (request) => {
    const query = new URL(request.url).searchParams;
    queries.push(query);
    return { status: 200, body: { next: null, previous: null, ...answer(query) } };
  });
  return queries;
}

function signedInAs(role: 'viewer' | 'operator' | 'admin') {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: 'olga', is_superuser: false, role } });
}

describe('AuditPage', () => {
  it('tells a viewer the log is not theirs to read, without asking the API for it', async () => {
    signedInAs('viewer');
    renderWithProviders(<AuditPage />, { path: '/audit' });
    expect(await screen.findByText('Not allowed')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Go to the dashboard' })).toHaveAttribute('href', '/');
    expect(apiCalls.map((c) => c.path)).not.toContain('/api/v1/audit/');
  });

  it('shows entries newest first to an operator, with a row that expands to the field diff and body', async () => {
    signedInAs('operator');
    mockAudit(() => ({
      count: 2,
      results: [
        entry({ id: 2, action: 'create', object_type: 'user', object_name: 'bob', status: 201, changes: { username: 'bob', password: '(secret)' }, body: null, token: 'ci' }),
        entry({}),
      ],
    }));
    const { user } = renderWithProviders(<AuditPage />, { path: '/audit' });
    const table = await screen.findByRole('table', { name: 'Audit log, newest first' });
    const [first, second] = within(table).getAllByRole('row').slice(1);
    expect(first).toHaveTextContent(/admin\s*token ci\s*create\s*user bob\s*201/);
    expect(second).toHaveTextContent(/update\s*pool web\s*200/);
    expect(screen.getByText('2 entries.')).toBeInTheDocument();

    const details = within(second!).getByRole('button', { name: /^Details of update pool web/ });
    expect(details).toHaveAttribute('aria-expanded', 'false');
    await user.click(details);
    expect(details).toHaveAttribute('aria-expanded', 'true');
    const diff = screen.getByRole('table', { name: 'Changes of entry 1' });
    expect(within(diff).getByRole('row', { name: /algorithm/ })).toHaveTextContent(/algorithm\s*roundrobin\s*leastconn/);
    expect(screen.getByText('PATCH /api/v1/pools/3/ from 192.0.2.1')).toBeInTheDocument();
    expect(screen.getByText(/"algorithm": "leastconn"/)).toBeInTheDocument();

    await user.click(within(first!).getByRole('button', { name: /^Details of create user bob/ }));
    const created = screen.getByRole('table', { name: 'Changes of entry 2' });
    expect(within(created).getByRole('row', { name: /password/ })).toHaveTextContent('(secret)');
  });

  it('sends every filter the API offers, keeps them for export, and pages through', async () => {
    signedInAs('admin');
    const queries = mockAudit((query) => ({ count: 120, results: [entry({ id: 100 + Number(query.get('offset') ?? 0) })] }));
    const { user } = renderWithProviders(<AuditPage />, { path: '/audit' });
    await screen.findByRole('table', { name: 'Audit log, newest first' });
    expect(Object.fromEntries(queries.at(-1)!)).toEqual({ limit: '50', offset: '0' });

    const form = screen.getByRole('search', { name: 'Filter the audit log' });
    await user.type(within(form).getByRole('textbox', { name: 'User' }), 'acc-op');
    await user.type(within(form).getByRole('combobox', { name: 'Action' }), 'create,update');
    await user.type(within(form).getByRole('combobox', { name: 'Object kind' }), 'user');
    await user.type(within(form).getByRole('textbox', { name: 'Object name' }), 'bob');
    await user.selectOptions(within(form).getByRole('combobox', { name: 'Outcome' }), 'failed');
    await user.type(within(form).getByLabelText('From'), '2026-11-01T08:30:00');
    await user.type(within(form).getByRole('searchbox', { name: 'Text' }), 'pools');
    await user.click(within(form).getByRole('button', { name: 'Apply filters' }));

    const since = new Date('2026-11-01T08:30:00').toISOString();
    const expected = { actor: 'acc-op', action: 'create,update', object_type: 'user', object_name: 'bob', status: 'failed', since, q: 'pools' };
    await screen.findByText('120 entries match the filters.');
    expect(Object.fromEntries(queries.at(-1)!)).toEqual({ ...expected, limit: '50', offset: '0' });

    const csv = new URL(screen.getByRole('link', { name: 'Export CSV' }).getAttribute('href')!, 'http://x');
    expect(csv.pathname).toBe('/api/v1/audit/export/');
    expect(Object.fromEntries(csv.searchParams)).toEqual({ ...expected, format: 'csv' });
    const jsonl = new URL(screen.getByRole('link', { name: 'Export JSON Lines' }).getAttribute('href')!, 'http://x');
    expect(jsonl.searchParams.get('format')).toBe('jsonl');
    expect(jsonl.searchParams.get('actor')).toBe('acc-op');

    await user.click(screen.getByRole('button', { name: 'Older' }));
    expect(await screen.findByText('Page 2 of 3')).toBeInTheDocument();
    expect(queries.at(-1)!.get('offset')).toBe('50');
    expect(queries.at(-1)!.get('actor')).toBe('acc-op');

    // Applied filters are in the address: the form is drawn anew from them.
    const applied = screen.getByRole('search', { name: 'Filter the audit log' });
    expect(within(applied).getByRole('textbox', { name: 'User' })).toHaveValue('acc-op');
    await user.click(within(applied).getByRole('button', { name: 'Clear filters' }));
    await screen.findByText('120 entries.');
    expect(Object.fromEntries(queries.at(-1)!)).toEqual({ limit: '50', offset: '0' });
  });

  it('starts from the filters in the address and shows a refused filter next to its field', async () => {
    signedInAs('admin');
    mockApi('GET', '/api/v1/audit/', { status: 400, body: { status: ['Expected ok, failed or an HTTP status code.'] } });
    renderWithProviders(<AuditPage />, { path: '/audit?actor=olga&status=9' });
    const form = await screen.findByRole('search', { name: 'Filter the audit log' });
    expect(within(form).getByRole('textbox', { name: 'User' })).toHaveValue('olga');
    expect(await within(form).findByText('Expected ok, failed or an HTTP status code.')).toBeInTheDocument();
  });

  it('follows new entries while asked to', async () => {
    signedInAs('operator');
    let results = [entry({})];
    mockAudit(() => ({ count: results.length, results }));
    const { user } = renderWithProviders(<AuditPage />, { path: '/audit' });
    await screen.findByText('1 entry.');
    await user.click(screen.getByRole('checkbox', { name: 'Follow new entries' }));
    results = [entry({ id: 5, action: 'sign-in', object_type: 'user', object_name: 'acc-op', method: 'POST' }), ...results];
    expect(await screen.findByText('2 entries.', {}, { timeout: 8000 })).toBeInTheDocument();
    expect(screen.getByRole('row', { name: /sign-in/ })).toBeInTheDocument();
  }, 12_000);
});
