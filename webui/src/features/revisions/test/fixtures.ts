import type { ChangeSummary, NodeResult, ObjectChange, Pending, Revision } from '../types';

export const at = '2026-11-22T10:00:00Z';

export function nodeResult(fields: Partial<NodeResult> = {}): NodeResult {
  return { node: 'lb1', state: 'applied', message: '', problems: [], running_revision: null, updated_at: at, ...fields };
}

/** A revision as the API lists it; id = number + 100, so a test notices ids and numbers mixed up. */
export function revision(number: number, fields: Partial<Revision> = {}): Revision {
  return {
    id: number + 100,
    number,
    message: `r${number}`,
    author: 'admin',
    created_at: at,
    nodes: [nodeResult({ running_revision: number })],
    live: true,
    rollback_of: null,
    confirm_within_s: null,
    confirm_by: null,
    confirm_state: 'none',
    confirm_problem: '',
    ...fields,
  };
}

/** The changes counted as the API counts them (all of them, whatever the page). */
export function counted(objects: readonly ObjectChange[]): { count: number; summary: ChangeSummary } {
  const summary = { added: 0, changed: 0, removed: 0 };
  for (const object of objects) summary[object.change] += 1;
  return { count: objects.length, summary };
}

/** What the API answers for revisions/pending/ with `objects` pending: the page `request` asks for, all of them counted. */
export function pendingPage(request: Request, objects: readonly ObjectChange[], baseRevision: number | null): Pending {
  const query = new URL(request.url).searchParams;
  const offset = Number(query.get('offset') ?? 0);
  const limit = Number(query.get('limit') ?? objects.length);
  return { pending: objects.length > 0, base_revision: baseRevision, ...counted(objects), objects: objects.slice(offset, offset + limit) };
}
