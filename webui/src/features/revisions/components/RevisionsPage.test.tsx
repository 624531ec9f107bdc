import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Role } from '@/features/auth';
import { mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { sessionLoaded, signedInAs } from '@/test/session';
import { pendingPage, revision } from '../test/fixtures';
import type { ObjectChange } from '../types';
import { RevisionsPage } from './RevisionsPage';

function renderPage(role: Role) {
  signedInAs(role);
  const objects: ObjectChange[] = [{ path: 'pools/web', change: 'changed', fields: [{ field: 'algorithm', old: 'round-robin', new: 'least-connections', default: false }] }];
  mockApi('GET', '/api/v1/revisions/pending/', (request) => ({ status: 200, body: pendingPage(request, objects, 3) }));
  const deadline = new Date(Date.now() + 60_000).toISOString();
  mockApi('GET', '/api/v1/revisions/', (request) => {
    const number = new URL(request.url).searchParams.get('number');
    return { status: 200, body: page([number ? revision(2) : revision(3, { confirm_state: 'awaiting', confirm_by: deadline, confirm_within_s: 60 })]) };
  });
  return renderWithProviders(<RevisionsPage />, { path: '/revisions' });
}

describe('RevisionsPage', () => {
  it('gives an operator Apply, Confirm and Roll back now next to the pending changes and the history', async () => {
    renderPage('operator');
    expect(await screen.findByText('1 change not applied')).toBeInTheDocument();
    expect(await screen.findByRole('button', { name: 'Apply' })).toBeInTheDocument();
    expect(await screen.findByRole('button', { name: 'Confirm' })).toBeInTheDocument();
    expect(await screen.findByRole('button', { name: 'Roll back now' })).toBeInTheDocument();
    expect(await screen.findByRole('table', { name: 'Revision history' })).toBeInTheDocument();
  });

  it('shows a viewer the same without a single button that changes anything', async () => {
    const { queryClient } = renderPage('viewer');
    expect(await screen.findByText('1 change not applied')).toBeInTheDocument();
    expect(await screen.findByRole('timer', { name: 'Time left to confirm revision 3' })).toBeInTheDocument();
    expect(await screen.findByRole('table', { name: 'Revision history' })).toBeInTheDocument();
    await sessionLoaded(queryClient);
    expect(screen.queryByRole('region', { name: 'Apply changes' })).not.toBeInTheDocument();
    for (const name of ['Apply', 'Apply with confirm', 'Confirm', 'Roll back now']) {
      expect(screen.queryByRole('button', { name })).not.toBeInTheDocument();
    }
  });
});
