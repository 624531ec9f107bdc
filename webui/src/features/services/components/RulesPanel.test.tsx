import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Role } from '@/features/auth';
import { queryKeys } from '@/lib/queryKeys';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import type { Rule, VirtualService } from '../types';
import { RulesPanel } from './RulesPanel';

const service = { id: 5, name: 'web', vip: '10.0.0.10', port: 443, protocol: 'https', default_pool: 3 } as VirtualService;
const pools = [
  { id: 3, name: 'web' },
  { id: 4, name: 'api' },
];
const rules: Rule[] = [
  {
    id: 41, virtual_service: 5, position: 0, name: 'api', enabled: true, action: 'use_pool', pool: 4,
    conditions: [
      { kind: 'path_prefix', values: ['/api'], name: '', negate: false },
      { kind: 'method', values: ['POST'], name: '', negate: false },
    ],
  },
  {
    id: 42, virtual_service: 5, position: 1, name: 'old', enabled: false, action: 'redirect', redirect_code: 301, redirect_location: '/new',
    conditions: [{ kind: 'header_present', values: [], name: 'X-Legacy', negate: true }],
  },
  {
    id: 43, virtual_service: 5, position: 2, name: 'tag', enabled: true, action: 'set_response_header', header_name: 'X-Served-By', header_value: 'lb',
    conditions: [{ kind: 'host_suffix', values: ['.example.com', '.example.org'], name: '', negate: false }],
  },
];

function mockUser(role: Role) {
  mockApi('GET', '/api/v1/auth/me/', { status: 200, body: { id: 1, username: role, is_superuser: false, role } });
}

function renderPanel(role: Role = 'admin') {
  mockUser(role);
  mockApi('GET', '/api/v1/rules/', { status: 200, body: page([...rules].reverse()) });
  return renderWithProviders(<RulesPanel service={service} pools={pools} />);
}

describe('RulesPanel', () => {
  it('lists the rules in order with readable conditions and actions', async () => {
    renderPanel();
    const table = await screen.findByRole('table', { name: 'Rules of web' });
    await within(table).findByRole('checkbox', { name: 'Rule old enabled' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((row) => within(row).getByRole('rowheader').textContent)).toEqual(['api', 'old', 'tag']);
    expect(rows[0]).toHaveTextContent('path starts with /api AND method is POST');
    expect(rows[0]).toHaveTextContent('use pool api');
    expect(rows[1]).toHaveTextContent('not header X-Legacy is present');
    expect(rows[1]).toHaveTextContent('redirect 301 to /new');
    expect(rows[2]).toHaveTextContent('host ends with .example.com or .example.org');
    expect(rows[2]).toHaveTextContent('set response header X-Served-By: lbthen goes on');
    expect(within(rows[1]!).getByRole('checkbox', { name: 'Rule old enabled' })).not.toBeChecked();
    expect(within(rows[0]!).getByRole('button', { name: 'Move rule api up' })).toBeDisabled();
    expect(within(rows[2]!).getByRole('button', { name: 'Move rule tag down' })).toBeDisabled();
  });

  it('moves a rule with PATCH of its new position', async () => {
    mockApi('PATCH', '/api/v1/rules/42/', { status: 200, body: { ...rules[1], position: 0 } });
    const { user } = renderPanel();
    await user.click(await screen.findByRole('button', { name: 'Move rule old up' }));
    expect(apiCalls).toContainEqual({ method: 'PATCH', path: '/api/v1/rules/42/', body: { position: 0 } });
    await user.click(screen.getByRole('button', { name: 'Move rule api down' }));
    expect(apiCalls).toContainEqual({ method: 'PATCH', path: '/api/v1/rules/41/', body: { position: 1 } });
  });

  it('turns a rule on and off in place', async () => {
    mockApi('PATCH', '/api/v1/rules/42/', { status: 200, body: { ...rules[1], enabled: true } });
    const { user } = renderPanel();
    await user.click(await screen.findByRole('checkbox', { name: 'Rule old enabled' }));
    expect(apiCalls).toContainEqual({ method: 'PATCH', path: '/api/v1/rules/42/', body: { enabled: true } });
  });

  it('edits a rule in the form below and adds new ones at the end', async () => {
    const { user } = renderPanel();
    expect(await screen.findByRole('heading', { name: 'Add a rule' })).toBeInTheDocument();
    await user.click(await screen.findByRole('button', { name: 'Edit rule old' }));
    expect(screen.getByRole('heading', { name: 'Edit rule old' })).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Header name' })).toHaveValue('X-Legacy');
    expect(screen.getByRole('textbox', { name: 'Location' })).toHaveValue('/new');
  });

  it.each(['viewer', 'operator'] as const)('shows a %s the rules without controls to change them', async (role) => {
    const { queryClient } = renderPanel(role);
    const table = await screen.findByRole('table', { name: 'Rules of web' });
    await waitFor(() => expect(queryClient.getQueryData(queryKeys.me)).toMatchObject({ role }));
    expect(within(table).getAllByRole('rowheader').map((cell) => cell.textContent)).toEqual(['api', 'old', 'tag']);
    expect(within(table).getAllByText('off')).toHaveLength(1);
    expect(screen.queryByRole('checkbox')).not.toBeInTheDocument();
    expect(screen.queryByRole('button')).not.toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Add a rule' })).not.toBeInTheDocument();
  });

  it('offers no editor on a TCP service', async () => {
    mockUser('admin');
    mockApi('GET', '/api/v1/rules/', { status: 200, body: page([]) });
    renderWithProviders(<RulesPanel service={{ ...service, protocol: 'tcp' }} pools={pools} />);
    expect(await screen.findByText('Content-switching rules need an HTTP or HTTPS service.')).toBeInTheDocument();
    expect(screen.queryByRole('heading', { name: 'Add a rule' })).not.toBeInTheDocument();
  });
});
