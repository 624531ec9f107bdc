import { ApiError, api, isRecord, unwrap } from '@/lib/api';
import type { NothingToApply, Pending, PendingCount, PublishError, PublishProblem, Revision, RevisionDiff } from '../types';

export type RevisionPage = { count: number; results: Revision[] };

export function listRevisions(limit: number, offset: number): Promise<RevisionPage> {
  return unwrap(api.GET('/api/v1/revisions/', { params: { query: { limit, offset } } }));
}

export function getRevision(id: number): Promise<Revision> {
  return unwrap(api.GET('/api/v1/revisions/{id}/', { params: { path: { id } } }));
}

/** The revision numbered `number` (links use ids; rollback_of names a number); null if there is none. */
export async function findRevisionByNumber(number: number): Promise<Revision | null> {
  const page = await unwrap(api.GET('/api/v1/revisions/', { params: { query: { number, limit: 1 } } }));
  return page.results[0] ?? null;
}

/**
 * Freezes the current objects into a new revision and publishes it to every node. With
 * `confirmWithinS` it rolls back by itself unless confirmed within that many seconds. With
 * nothing pending the API refuses (409 nothing_to_apply) unless `force`.
 */
export function applyRevision({ message, confirmWithinS, force = false }: { message: string; confirmWithinS?: number; force?: boolean }): Promise<Revision> {
  const body = confirmWithinS === undefined ? { message, force } : { message, force, confirm_within_s: confirmWithinS };
  return unwrap(api.POST('/api/v1/revisions/', { body }));
}

/** What an apply would change now, object by object, field by field: `limit` objects from `offset`, all of them counted. */
export function getPending(limit: number, offset = 0): Promise<Pending> {
  return unwrap(api.GET('/api/v1/revisions/pending/', { params: { query: { limit, offset } } }));
}

/** How many objects an apply would change now, without them (what the banner polls). */
export function getPendingCount(): Promise<PendingCount> {
  return unwrap(api.GET('/api/v1/revisions/pending/count/'));
}

/**
 * What revision `id` changed since revision number `from` (default: the one before it): `limit`
 * objects from `offset`, all of them counted, and each node's files only with `files`.
 */
export function getRevisionDiff(id: number, from: number | undefined, { limit, offset, files }: { limit: number; offset: number; files: boolean }): Promise<RevisionDiff> {
  const query = { limit, offset, files, ...(from === undefined ? {} : { from }) };
  return unwrap(api.GET('/api/v1/revisions/{id}/diff/', { params: { path: { id }, query } }));
}

/** Keeps a revision applied with confirm; 409 when it no longer awaits confirmation. */
export function confirmRevision(id: number): Promise<Revision> {
  return unwrap(api.POST('/api/v1/revisions/{id}/confirm/', { params: { path: { id } } }));
}

/** Publishes revision `id`'s objects again, as a new revision that records rollback_of. */
export function rollbackToRevision(id: number, message = ''): Promise<Revision> {
  return unwrap(api.POST('/api/v1/revisions/{id}/rollback/', { params: { path: { id } }, body: message ? { message } : {} }));
}

/** The refusal of an apply that had nothing pending (409 `nothing_to_apply`); null for any other error. */
export function nothingToApply(error: unknown): NothingToApply | null {
  if (!(error instanceof ApiError) || error.status !== 409 || !isRecord(error.body) || error.body.code !== 'nothing_to_apply') return null;
  const { detail, base_revision: base } = error.body;
  return { detail: String(detail ?? ''), code: 'nothing_to_apply', base_revision: typeof base === 'number' ? base : null };
}

/** The compiler's or a daemon's reasons when an apply was refused (400 `{detail, problems, daemon_output}`). */
export function publishProblems(error: unknown): PublishError | null {
  if (!(error instanceof ApiError) || error.status !== 400 || !isRecord(error.body)) return null;
  const { detail, problems, daemon_output: output } = error.body;
  if (!Array.isArray(problems)) return null;
  return {
    detail: typeof detail === 'string' ? detail : 'Not published.',
    problems: problems.filter(isRecord).map(publishProblem),
    daemon_output: textOrNull(output),
  };
}

function textOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function publishProblem(p: Record<string, unknown>): PublishProblem {
  return {
    path: String(p.path ?? ''),
    message: String(p.message ?? ''),
    object: textOrNull(p.object),
    name: textOrNull(p.name),
    id: typeof p.id === 'number' ? p.id : null,
    field: textOrNull(p.field) ?? '',
    daemon: textOrNull(p.daemon),
    node: textOrNull(p.node),
    daemon_message: textOrNull(p.daemon_message),
  };
}
