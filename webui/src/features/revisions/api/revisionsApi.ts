import { ApiError, api, isRecord, unwrap } from '@/lib/api';
import type { PublishError, Revision } from '../types';

export type RevisionPage = { count: number; results: Revision[] };

export function listRevisions(limit: number, offset: number): Promise<RevisionPage> {
  return unwrap(api.GET('/api/v1/revisions/', { params: { query: { limit, offset } } }));
}

export function getRevision(id: number): Promise<Revision> {
  return unwrap(api.GET('/api/v1/revisions/{id}/', { params: { path: { id } } }));
}

/** Freezes the current objects into a new revision and publishes it to every node. */
export function applyRevision(message: string): Promise<Revision> {
  return unwrap(api.POST('/api/v1/revisions/', { body: { message } }));
}

/** The compiler's or HAProxy's reasons when an apply was refused (400 `{detail, problems}`). */
export function publishProblems(error: unknown): PublishError | null {
  if (!(error instanceof ApiError) || error.status !== 400 || !isRecord(error.body)) return null;
  const { detail, problems } = error.body;
  if (!Array.isArray(problems)) return null;
  return { detail: typeof detail === 'string' ? detail : 'Not published.', problems: problems.filter(isRecord).map((p) => ({ path: String(p.path ?? ''), message: String(p.message ?? '') })) };
}
