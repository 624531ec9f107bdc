import { useMutation } from '@tanstack/react-query';
import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Role } from '@/features/auth';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { sessionLoaded, signedInAs } from '@/test/session';
import { counted, pendingPage, revision } from '../test/fixtures';
import type { ObjectChange } from '../types';
import { PendingBanner } from './PendingBanner';

const changes: ObjectChange[] = [
  { path: 'pools/web', change: 'changed', fields: [{ field: 'members/s1/weight', old: 1, new: 4, default: false }] },
  { path: 'virtual-services/www', change: 'added', fields: [{ field: 'port', old: null, new: 80, default: false }] },
];

function answerPending(objects: () => ObjectChange[]) {
  mockApi('GET', '/api/v1/revisions/pending/', (request) => ({ status: 200, body: pendingPage(request, objects(), 3) }));
  mockApi('GET', '/api/v1/revisions/pending/count/', () => ({
    status: 200,
    body: { pending: objects().length > 0, base_revision: 3, ...counted(objects()) },
  }));
}

function setUp(role: Role, objects: () => ObjectChange[] = () => changes, path = '/pools') {
  signedInAs(role);
  answerPending(objects);
  mockApi('GET', '/api/v1/revisions/', { status: 200, body: page([revision(3)]) });
  return renderWithProviders(<PendingBanner />, { path });
}

const pendingReads = () => apiCalls.filter((c) => c.path === '/api/v1/revisions/pending/count/').length;
const objectReads = () => apiCalls.filter((c) => c.path === '/api/v1/revisions/pending/').length;

describe('PendingBanner', () => {
  it('counts the changes not applied, links to them, and applies them with a message after a confirmation step', async () => {
    let left = changes;
    mockApi('POST', '/api/v1/revisions/', () => {
      left = [];
      return { status: 201, body: revision(4, { nodes: [] }) };
    });
    const { user } = setUp('operator', () => left);
    const banner = await screen.findByRole('region', { name: 'Changes not applied' });
    expect(within(banner).getByRole('status')).toHaveTextContent('2 changes not applied');
    expect(within(banner).getByRole('link', { name: 'Review changes' })).toHaveAttribute('href', '/revisions');
    expect(objectReads()).toBe(0); // the count only, until the Apply step needs the changes

    await user.click(within(banner).getByRole('button', { name: 'Apply' }));
    const step = await within(banner).findByRole('form', { name: 'Apply 2 changes' });
    expect(within(banner).queryByRole('button', { name: 'Apply' })).not.toBeInTheDocument();
    expect(step).toHaveTextContent('publishes 2 changes to every node as a new revision');
    const listed = within(within(step).getByRole('list', { name: 'Changes to apply' })).getAllByRole('listitem');
    expect(listed.map((item) => item.textContent)).toEqual(['Pool web changed', 'Virtual service www added']);
    expect(apiCalls.some((c) => c.method === 'POST')).toBe(false); // nothing sent before the step's Apply
    const message = within(step).getByRole('textbox', { name: 'Message' });
    expect(message).toHaveFocus();
    await user.type(message, 'weight 4 on s1, www');
    await user.click(within(step).getByRole('button', { name: 'Apply 2 changes' }));
    expect(await screen.findByText('Revision 4 published.')).toBeInTheDocument();
    expect(apiCalls.filter((c) => c.method === 'POST')).toEqual([
      { method: 'POST', path: '/api/v1/revisions/', body: { message: 'weight 4 on s1, www', force: false } },
    ]);
    expect(screen.queryByText(/changes? not applied/)).not.toBeInTheDocument();
    expect(screen.queryByRole('form')).not.toBeInTheDocument();
  });

  it('names the first few of many changes and counts the rest, reading only those few', async () => {
    const many: ObjectChange[] = Array.from({ length: 1200 }, (_, i) => ({ path: `pools/p${i}`, change: 'added', fields: [] }));
    const { user } = setUp('operator', () => many);
    const banner = await screen.findByRole('region', { name: 'Changes not applied' });
    await user.click(within(banner).getByRole('button', { name: 'Apply' }));
    const step = await within(banner).findByRole('form', { name: 'Apply 1200 changes' });
    const listed = within(within(step).getByRole('list', { name: 'Changes to apply' })).getAllByRole('listitem');
    expect(listed.map((item) => item.textContent)).toEqual(['Pool p0 added', 'Pool p1 added', 'Pool p2 added', 'Pool p3 added', 'Pool p4 added', 'and 1195 changes more']);
  });

  it('cancels the confirmation step without applying, and refuses a message over 500 characters', async () => {
    const { user } = setUp('operator');
    const banner = await screen.findByRole('region', { name: 'Changes not applied' });
    await user.click(within(banner).getByRole('button', { name: 'Apply' }));
    let step = await within(banner).findByRole('form', { name: 'Apply 2 changes' });
    await user.click(within(step).getByRole('button', { name: 'Cancel' }));
    expect(within(banner).queryByRole('form')).not.toBeInTheDocument();

    await user.click(within(banner).getByRole('button', { name: 'Apply' }));
    step = await within(banner).findByRole('form', { name: 'Apply 2 changes' });
    const message = within(step).getByRole('textbox', { name: 'Message' });
    expect(message).toHaveValue(''); // a fresh step
    await user.click(message);
    await user.paste('x'.repeat(501));
    await user.click(within(step).getByRole('button', { name: 'Apply 2 changes' }));
    expect(await within(step).findByText('At most 500 characters.')).toBeInTheDocument();
    expect(message).toHaveAttribute('aria-invalid', 'true');
    expect(apiCalls.some((c) => c.method === 'POST')).toBe(false);
  });

  it('says so when someone else applied the changes meanwhile (nothing to apply)', async () => {
    let left = changes;
    mockApi('POST', '/api/v1/revisions/', () => {
      left = [];
      return { status: 409, body: { detail: 'nothing to apply: the configuration is the same as revision 3', code: 'nothing_to_apply', base_revision: 3 } };
    });
    const { user } = setUp('operator', () => left);
    const banner = await screen.findByRole('region', { name: 'Changes not applied' });
    await user.click(within(banner).getByRole('button', { name: 'Apply' }));
    await user.click(await within(banner).findByRole('button', { name: 'Apply 2 changes' }));
    expect(await within(banner).findByText('Nothing to apply.')).toBeInTheDocument();
    expect(within(banner).getByRole('status')).toHaveTextContent('Nothing to apply. The objects are the same as in revision 3, the last one applied.');
    expect(within(banner).queryByRole('alert')).not.toBeInTheDocument();
    expect(within(banner).queryByRole('button', { name: 'Apply' })).not.toBeInTheDocument();
    await user.click(within(banner).getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByRole('region', { name: 'Changes not applied' })).not.toBeInTheDocument();
  });

  it('shows a viewer the changes but no Apply', async () => {
    const { queryClient } = setUp('viewer');
    expect(await screen.findByText('2 changes not applied')).toBeInTheDocument();
    await sessionLoaded(queryClient);
    expect(screen.getByRole('link', { name: 'Review changes' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Apply' })).not.toBeInTheDocument();
  });

  it('is not there when nothing is pending, nor on Apply & history itself', async () => {
    setUp('admin', () => []);
    await waitFor(() => expect(pendingReads()).toBe(1));
    expect(screen.queryByRole('region', { name: 'Changes not applied' })).not.toBeInTheDocument();
  });

  it('is not shown on the page that lists the changes', async () => {
    setUp('admin', () => changes, '/revisions');
    await waitFor(() => expect(pendingReads()).toBe(1));
    expect(screen.queryByText('2 changes not applied')).not.toBeInTheDocument();
  });

  it('asks again after any change made elsewhere in the console', async () => {
    let objects: ObjectChange[] = [];
    signedInAs('admin');
    answerPending(() => objects);
    mockApi('GET', '/api/v1/revisions/', { status: 200, body: page([revision(3)]) });
    function SomeForm() {
      const save = useMutation({ mutationFn: async () => void (objects = changes.slice(0, 1)) });
      return <button onClick={() => save.mutate()}>Save pool</button>;
    }
    const { user } = renderWithProviders(
      <>
        <PendingBanner />
        <SomeForm />
      </>,
    );
    await waitFor(() => expect(pendingReads()).toBe(1));
    expect(screen.queryByText(/not applied/)).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Save pool' }));
    expect(await screen.findByText('1 change not applied')).toBeInTheDocument();
    expect(pendingReads()).toBe(2);
  });

  it('says when a revision awaits confirmation', async () => {
    signedInAs('operator');
    answerPending(() => []);
    const deadline = new Date(Date.now() + 125_000).toISOString();
    mockApi('GET', '/api/v1/revisions/', { status: 200, body: page([revision(5, { confirm_state: 'awaiting', confirm_by: deadline, confirm_within_s: 130 })]) });
    renderWithProviders(<PendingBanner />);
    expect(await screen.findByText('Revision 5 awaits confirmation')).toBeInTheDocument();
    expect(screen.getByText(/2:0[45] left, then it rolls back by itself/)).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Confirm or roll back' })).toHaveAttribute('href', '/revisions');
  });
});
