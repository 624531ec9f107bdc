import { Badge, type BadgeTone } from '@/components';
import type { HealthStatus, ServiceState } from '../types';

const SERVICE_TONE: Record<ServiceState, BadgeTone> = { up: 'success', degraded: 'warning', down: 'danger', disabled: 'neutral', unknown: 'neutral' };

/** A service's state in words (the colour only repeats it). */
export function ServiceStateBadge({ state }: { state: ServiceState }) {
  return <Badge tone={SERVICE_TONE[state] ?? 'neutral'}>{state}</Badge>;
}

const HEALTH_TONE: Record<HealthStatus, BadgeTone> = { up: 'success', down: 'danger', drain: 'warning', maint: 'neutral', unchecked: 'info' };
const HEALTH_WORD: Record<HealthStatus, string> = { up: 'up', down: 'down', drain: 'draining', maint: 'maintenance', unchecked: 'not checked' };

export function HealthStatusBadge({ status }: { status: HealthStatus }) {
  return <Badge tone={HEALTH_TONE[status] ?? 'neutral'}>{HEALTH_WORD[status] ?? status}</Badge>;
}
