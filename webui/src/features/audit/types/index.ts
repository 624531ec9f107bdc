import type { Schemas } from '@/lib/api';

export type AuditEntry = Schemas['AuditEntry'];

/** The audit log's filters (api/accounts/filtersets.py), as typed; empty means "any". */
export type AuditFilters = {
  actor: string;
  action: string;
  object_type: string;
  object_name: string;
  status: string;
  /** `<input type="datetime-local">` values, in the browser's time zone. */
  since: string;
  until: string;
  q: string;
};

export const FILTER_NAMES = ['actor', 'action', 'object_type', 'object_name', 'status', 'since', 'until', 'q'] as const;

export const NO_FILTERS: AuditFilters = { actor: '', action: '', object_type: '', object_name: '', status: '', since: '', until: '', q: '' };

export const AUDIT_PAGE_SIZE = 50;
export const FOLLOW_MS = 5000;

/** Action words the API writes (views' actions and the accounts app's own events). */
export const KNOWN_ACTIONS = [
  'create',
  'update',
  'delete',
  'generate',
  'runtime',
  'apply',
  'confirm',
  'rollback',
  'revoke',
  'standby',
  'sign-in',
  'sign-in-failed',
  'sign-in-locked',
  'sign-out',
  'password-change',
  'automatic-rollback',
];

/** Object kinds as the API names them (models' verbose names). */
export const OBJECT_TYPES = [
  'virtual-service',
  'pool',
  'member',
  'health-check',
  'rule',
  'certificate',
  'node',
  'ha-group',
  'ipvs-connection-sync',
  'revision',
  'user',
  'api-token',
];

export const STATUS_OPTIONS = [
  { value: 'ok', label: 'Succeeded' },
  { value: 'failed', label: 'Failed (400 or above)' },
  { value: '400', label: '400 Bad request' },
  { value: '401', label: '401 Not signed in' },
  { value: '403', label: '403 Refused' },
  { value: '404', label: '404 Not found' },
  { value: '409', label: '409 Conflict' },
  { value: '429', label: '429 Throttled' },
];

/** A datetime-local value ("2026-01-31T12:00") as the ISO instant the API wants. */
function instant(local: string): string {
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? local : date.toISOString();
}

/** The filters that are set, as the API's query parameters. */
export function toQuery(filters: AuditFilters): Record<string, string> {
  const query: Record<string, string> = {};
  for (const name of FILTER_NAMES) {
    const value = filters[name].trim();
    if (value) query[name] = name === 'since' || name === 'until' ? instant(value) : value;
  }
  return query;
}

/** The filters in a page address (`/audit?actor=alice`), so a filtered view can be linked. */
export function filtersFrom(params: URLSearchParams): AuditFilters {
  const filters = { ...NO_FILTERS };
  for (const name of FILTER_NAMES) filters[name] = params.get(name) ?? '';
  return filters;
}

export function toSearchParams(filters: AuditFilters): Record<string, string> {
  return Object.fromEntries(FILTER_NAMES.filter((name) => filters[name].trim()).map((name) => [name, filters[name].trim()]));
}

export type ExportFormat = 'csv' | 'jsonl';

/** The download address of the entries these filters select. */
export function exportUrl(filters: AuditFilters, format: ExportFormat): string {
  return `/api/v1/audit/export/?${new URLSearchParams({ ...toQuery(filters), format })}`;
}

// --- what an entry changed ---

export type FieldChange = { field: string; before?: unknown; after?: unknown; value?: unknown };

function isPair(value: unknown): value is [unknown, unknown] {
  return Array.isArray(value) && value.length === 2;
}

/**
 * The rows of an entry's `changes`: an update is `{field: [old, new]}` (a secret just
 * "(changed)"); a create lists the new values, a delete the old ones.
 */
export function fieldChanges(action: string, changes: unknown): FieldChange[] {
  if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) return [];
  return Object.entries(changes as Record<string, unknown>).map(([field, value]) => {
    if (action === 'update' && isPair(value)) return { field, before: value[0], after: value[1] };
    if (action === 'delete' || action === 'revoke') return { field, before: value };
    if (action === 'create') return { field, after: value };
    return { field, value };
  });
}

export type RelatedChange = { object_type: string; object_name: string; action: string; changes: unknown };

export function relatedChanges(related: unknown): RelatedChange[] {
  if (!Array.isArray(related)) return [];
  return related.filter((item): item is RelatedChange => typeof item === 'object' && item !== null && 'action' in item);
}
