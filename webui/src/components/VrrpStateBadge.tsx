import { Badge, type BadgeTone } from './Badge';

/** A node's VRRP state in one HA group, as keepalived names it (lower case). */
export type VrrpState = 'master' | 'backup' | 'fault' | 'stopped' | 'unknown';

const TONE: Record<VrrpState, BadgeTone> = { master: 'success', backup: 'info', fault: 'danger', stopped: 'neutral', unknown: 'neutral' };

/** The state as a badge; anything the API adds later reads as itself, in neutral. */
export function VrrpStateBadge({ state }: { state: string }) {
  return <Badge tone={TONE[state as VrrpState] ?? 'neutral'}>{state}</Badge>;
}
