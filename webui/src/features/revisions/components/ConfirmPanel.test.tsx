import { act, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Role } from '@/features/auth';
import { apiCalls, mockApi, page } from '@/test/mockApi';
import { renderWithProviders } from '@/test/render';
import { sessionLoaded, signedInAs } from '@/test/session';
import { revision } from '../test/fixtures';
import type { Revision } from '../types';
import { ConfirmPanel } from './ConfirmPanel';

const START = new Date('2026-11-22T10:00:00Z');

/** Revision 5 applied with confirm `within` seconds ago-now; revision 4 before it. */
function awaiting(within: number): Revision {
  const deadline = new Date(START.getTime() + within * 1000).toISOString();
  return revision(5, { confirm_state: 'awaiting', confirm_within_s: within, confirm_by: deadline });
}

/** The API's history: revision 4 by number; otherwise the newest, which `newest()` decides. */
function answerHistory(newest: () => Revision) {
  mockApi('GET', '/api/v1/revisions/', (request) => {
    const number = new URL(request.url).searchParams.get('number');
    return { status: 200, body: page(number === '4' ? [revision(4)] : [newest()]) };
  });
}

async function tick(seconds: number) {
  await act(async () => {
    vi.advanceTimersByTime(seconds * 1000);
  });
}

function renderPanel(role: Role) {
  signedInAs(role);
  return renderWithProviders(<ConfirmPanel />);
}

const timer = () => screen.getByRole('timer', { name: 'Time left to confirm revision 5' });
const announcement = () => within(screen.getByRole('region', { name: 'Revision 5 awaits confirmation' })).getByRole('status');

describe('ConfirmPanel', () => {
  beforeEach(() => {
    // Only the clock and the countdown's tick are faked; fetches and promises run as usual.
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    vi.setSystemTime(START);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts down, announcing once a minute and the last ten seconds, then confirms', async () => {
    let current = awaiting(130);
    answerHistory(() => current);
    mockApi('POST', '/api/v1/revisions/105/confirm/', () => {
      current = { ...current, confirm_state: 'confirmed' };
      return { status: 200, body: current };
    });
    mockApi('GET', '/api/v1/revisions/105/', () => ({ status: 200, body: current }));
    const { user } = renderPanel('operator');

    expect(await screen.findByText('2:10')).toBe(timer());
    expect(announcement()).toHaveTextContent('Revision 5: Less than 3 minutes left.');
    expect(screen.getByText(/Fulcrum rolls back by itself: it publishes a new revision that restores the objects of revision 4\./)).toBeInTheDocument();

    await tick(5);
    expect(timer()).toHaveTextContent('2:05');
    expect(announcement()).toHaveTextContent('Less than 3 minutes left.'); // unchanged: not read out again
    await tick(65);
    expect(timer()).toHaveTextContent('1:00');
    expect(announcement()).toHaveTextContent('Less than a minute left.');
    await tick(52);
    expect(timer()).toHaveTextContent('0:08');
    expect(announcement()).toHaveTextContent('Revision 5: 8 seconds left.');

    await user.click(await screen.findByRole('button', { name: 'Confirm' }));
    expect(await screen.findByText('Revision 5 is confirmed: it stays applied.')).toBeInTheDocument();
    expect(screen.queryByRole('timer')).not.toBeInTheDocument();
    expect(apiCalls.filter((c) => c.method === 'POST').map((c) => c.path)).toEqual(['/api/v1/revisions/105/confirm/']);
  });

  it('shows the automatic rollback once the deadline has passed', async () => {
    const late = awaiting(12);
    const automatic = revision(6, { author: null as unknown as string, rollback_of: 4, message: 'automatic rollback: r5 not confirmed within 12 s' });
    // As the API does: reading the history after the deadline makes the rollback.
    answerHistory(() => (Date.now() >= START.getTime() + 12_000 ? automatic : late));
    mockApi('GET', '/api/v1/revisions/105/', { status: 200, body: { ...late, confirm_state: 'rolled-back' } });
    renderPanel('operator');

    expect(await screen.findByText('0:12')).toBeInTheDocument();
    await tick(12);
    expect(await screen.findByText('Revision 5 was rolled back')).toBeInTheDocument();
    expect(screen.getByText(/It was not confirmed in time: Fulcrum published/)).toHaveTextContent(
      'It was not confirmed in time: Fulcrum published revision 6, which restores the objects of revision 4.',
    );
    expect(screen.getByRole('link', { name: 'revision 6' })).toHaveAttribute('href', '/revisions/106');
  });

  it('rolls back now to the revision before', async () => {
    let current = awaiting(300);
    answerHistory(() => current);
    mockApi('POST', '/api/v1/revisions/104/rollback/', () => {
      current = revision(6, { rollback_of: 4, message: 'rollback of r5 (not confirmed)' });
      return { status: 201, body: current };
    });
    mockApi('GET', '/api/v1/revisions/105/', { status: 200, body: { ...awaiting(300), confirm_state: 'rolled-back' } });
    const { user } = renderPanel('admin');

    await user.click(await screen.findByRole('button', { name: 'Roll back now' }));
    expect(await screen.findByText('Revision 5 was rolled back')).toBeInTheDocument();
    expect(screen.getByText(/It was rolled back by hand as/)).toHaveTextContent('It was rolled back by hand as revision 6, which restores the objects of revision 4.');
    expect(apiCalls.find((c) => c.method === 'POST')).toEqual({
      method: 'POST',
      path: '/api/v1/revisions/104/rollback/',
      body: { message: 'rollback of r5 (not confirmed)' },
    });
  });

  it('shows a refused confirmation', async () => {
    answerHistory(() => awaiting(60));
    mockApi('POST', '/api/v1/revisions/105/confirm/', {
      status: 409,
      body: { detail: 'r5 is not awaiting confirmation: it was rolled back.', confirm_state: 'rolled-back' },
    });
    const { user } = renderPanel('operator');
    await user.click(await screen.findByRole('button', { name: 'Confirm' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Not confirmedr5 is not awaiting confirmation: it was rolled back.');
  });

  it('shows a viewer the countdown without Confirm or Roll back now', async () => {
    answerHistory(() => awaiting(60));
    const { queryClient } = renderPanel('viewer');
    expect(await screen.findByText('1:00')).toBeInTheDocument();
    await sessionLoaded(queryClient);
    expect(screen.getByText('An operator or an admin can confirm it or roll it back.')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Confirm' })).not.toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Roll back now' })).not.toBeInTheDocument();
  });

  it('shows nothing when no revision awaits confirmation', async () => {
    answerHistory(() => revision(5));
    const { container, queryClient } = renderPanel('admin');
    await vi.waitFor(() => expect(queryClient.getQueryState(['revisions', 'newest'])?.status).toBe('success'));
    expect(container).toBeEmptyDOMElement();
  });
});
