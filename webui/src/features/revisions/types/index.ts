import { z } from 'zod';
import type { Schemas } from '@/lib/api';

export type Revision = Schemas['Revision'];
export type NodeResult = Schemas['NodeRevision'];
export type NodeResultState = Schemas['NodeRevisionStateEnum'];
export type PublishProblem = Schemas['PublishProblem'];
export type PublishError = Schemas['PublishError'];
export type NothingToApply = Schemas['NothingToApply'];
export type Pending = Schemas['Pending'];
export type PendingCount = Schemas['PendingCount'];
export type ObjectChange = Schemas['ObjectChange'];
export type FieldChange = Schemas['FieldChange'];
export type FileChange = Schemas['FileChange'];
export type RevisionDiff = Schemas['RevisionDiff'];
export type ChangeSummary = Schemas['ChangeSummary'];
export type ConfirmState = Schemas['ConfirmStateEnum'];

/** The API's limits for apply with confirm (revisions.models.CONFIRM_WITHIN_S_MIN/MAX). */
export const CONFIRM_MIN_S = 10;
export const CONFIRM_MAX_S = 3600;

/** The confirmation windows offered; `custom` asks for seconds. */
export const CONFIRM_WINDOWS = [
  { value: '60', label: '1 minute' },
  { value: '300', label: '5 minutes' },
  { value: '600', label: '10 minutes' },
  { value: '1800', label: '30 minutes' },
  { value: 'custom', label: 'Other (seconds)' },
] as const;

/** A revision's message, for the history (revisions.models.Revision.message). */
const revisionMessage = z.string().trim().max(500, 'At most 500 characters.');

export const applyFormSchema = z
  .object({
    message: revisionMessage,
    withConfirm: z.boolean(),
    window: z.enum(['60', '300', '600', '1800', 'custom']),
    seconds: z.string().trim(),
  })
  .superRefine((values, ctx) => {
    if (!values.withConfirm || values.window !== 'custom') return;
    const seconds = Number(values.seconds);
    if (!/^\d+$/.test(values.seconds) || seconds < CONFIRM_MIN_S || seconds > CONFIRM_MAX_S) {
      ctx.addIssue({ code: 'custom', path: ['seconds'], message: `A whole number of seconds from ${CONFIRM_MIN_S} to ${CONFIRM_MAX_S}.` });
    }
  });
export type ApplyFormValues = z.infer<typeof applyFormSchema>;

/** The banner's confirmation step: only the message. */
export const applyMessageSchema = z.object({ message: revisionMessage });
export type ApplyMessageValues = z.infer<typeof applyMessageSchema>;

/** Why there is nothing to apply, from the last revision's number (null: none yet). */
export function sameAsRevision(base: number | null): string {
  return base === null ? 'No objects yet, and nothing applied.' : `The objects are the same as in revision ${base}, the last one applied.`;
}

/** The confirmation window the form asks for, in seconds; undefined: apply without confirm. */
export function confirmWithin(values: ApplyFormValues): number | undefined {
  if (!values.withConfirm) return undefined;
  return Number(values.window === 'custom' ? values.seconds : values.window);
}

/** True while any node has not yet reported on the revision. */
export function isSettling(revision: Pick<Revision, 'nodes'>): boolean {
  return revision.nodes.some((node) => node.state === 'pending');
}

// The first segment of an object path names its kind (revisions/diff.py SECTIONS).
const KINDS: Record<string, string> = {
  'virtual-services': 'Virtual service',
  pools: 'Pool',
  certificates: 'Certificate',
  nodes: 'Node',
  'ha-groups': 'HA group',
  'ipvs-sync': 'IPVS sync',
};

/** `pools/web` → {kind: 'Pool', name: 'web'}; `ipvs-sync` → {kind: 'IPVS sync', name: ''}. */
export function describeObject(path: string): { kind: string; name: string } {
  const [section = '', ...rest] = path.split('/');
  return { kind: KINDS[section] ?? section, name: rest.join('/') };
}

// Lists of named entries in an object, and the word for one entry.
const ENTRIES: Record<string, string> = { members: 'member', rules: 'rule', nodes: 'node', error_pages: 'error page' };
// Words an operator reads in capitals, or differently, in a field's name.
const WORDS: Record<string, string> = {
  vip: 'VIP', tls: 'TLS', sni: 'SNI', alpn: 'ALPN', h2: 'HTTP/2', hsts: 'HSTS', ca: 'CA', http: 'HTTP', https: 'HTTPS',
  ipvs: 'IPVS', vrid: 'VRID', ttl: 'TTL', ip: 'IP', id: 'ID', url: 'URL', vrrp: 'VRRP', garp: 'gratuitous ARP', maxconn: 'max connections',
};
const UNITS: Record<string, string> = { ms: '(ms)', s: '(s)', bytes: '(bytes)' };

/** A field name in words: `hsts_max_age_s` → "HSTS max age (s)". */
function words(name: string): string {
  const parts = name.split('_');
  const unit = parts.length > 1 ? UNITS[parts.at(-1)!] : undefined;
  const text = (unit ? parts.slice(0, -1) : parts).map((part) => WORDS[part] ?? part).join(' ');
  return unit ? `${text} ${unit}` : text;
}

/**
 * A field path of a change in words: `members/s1/max_queue` → "member s1: max queue",
 * `rules/order` → "order of the rules", `persistence/cookie_name` → "persistence: cookie name".
 */
export function describeField(path: string): string {
  const segments = path.split('/');
  const out: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const entry = ENTRIES[segment];
    if (entry && segments[i + 1] === 'order' && i + 2 === segments.length) {
      out.push(`order of the ${words(segment)}`);
      break;
    }
    if (entry && i + 1 < segments.length) {
      out.push(`${entry} ${segments[i + 1]}`);
      i++;
    } else out.push(words(segment));
  }
  const text = out.join(': ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A field's value as the change list shows it: strings as they are, the rest as JSON, unset as "—". */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value === '' ? '""' : value;
  return JSON.stringify(value);
}
