import { api, listAll, unwrap } from '@/lib/api';
import type { HealthEvent, HealthFilter, MemberHealth, Metrics, MetricsWindow, Overview } from '../types';

/** Every service's state and current figures, the nodes, and what waits to be applied. */
export function getOverview(): Promise<Overview> {
  return unwrap(api.GET('/api/v1/overview/'));
}

/** Per-service figures over the window, one series per service (or only `service`'s). */
export function getServiceMetrics(window: MetricsWindow, service?: number): Promise<Metrics> {
  return unwrap(api.GET('/api/v1/metrics/services/', { params: { query: { ...window, service } } }));
}

/** Per-member figures of a pool over the window, one series per member. */
export function getMemberMetrics(pool: number, window: MetricsWindow): Promise<Metrics> {
  return unwrap(api.GET('/api/v1/metrics/members/', { params: { query: { pool, ...window } } }));
}

/** The members' last check results, one row per member and node. */
export function listHealth(filter: HealthFilter): Promise<MemberHealth[]> {
  return listAll((limit, offset) => unwrap(api.GET('/api/v1/health/', { params: { query: { ...filter, limit, offset } } })));
}

/** A member's most recent health changes, newest first (one page: history, not an archive). */
export async function listHealthEvents(member: number, limit = 20): Promise<HealthEvent[]> {
  return (await unwrap(api.GET('/api/v1/health-events/', { params: { query: { member, limit } } }))).results;
}
