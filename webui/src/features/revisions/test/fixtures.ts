import type { NodeResult, Revision } from '../types';

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
