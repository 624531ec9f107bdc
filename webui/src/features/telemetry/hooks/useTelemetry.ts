import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { queryKeys } from '@/lib/queryKeys';
import * as telemetryApi from '../api/telemetryApi';
import type { HealthFilter, MetricsWindow } from '../types';

/** The agents report every 10 s: reading more often shows nothing new. */
export const LIVE_REFRESH_MS = 10_000;

/** The last hour, one bucket a minute. */
export const LAST_HOUR: MetricsWindow = { minutes: 60, step: 60 };

export function useOverview() {
  return useQuery({ queryKey: queryKeys.overview, queryFn: telemetryApi.getOverview, refetchInterval: LIVE_REFRESH_MS });
}

/** One service's figures; `enabled` false until its graph is on screen. */
export function useServiceMetrics(service: number, { enabled = true, window = LAST_HOUR }: { enabled?: boolean; window?: MetricsWindow } = {}) {
  return useQuery({
    queryKey: queryKeys.serviceMetrics(service, window),
    queryFn: () => telemetryApi.getServiceMetrics(window, service),
    refetchInterval: LIVE_REFRESH_MS,
    placeholderData: keepPreviousData,
    enabled,
  });
}

export function useMemberMetrics(pool: number, window: MetricsWindow = LAST_HOUR) {
  return useQuery({
    queryKey: queryKeys.memberMetrics(pool, window),
    queryFn: () => telemetryApi.getMemberMetrics(pool, window),
    refetchInterval: LIVE_REFRESH_MS,
    placeholderData: keepPreviousData,
  });
}

export function useHealth(filter: HealthFilter) {
  return useQuery({ queryKey: queryKeys.health(filter), queryFn: () => telemetryApi.listHealth(filter), refetchInterval: LIVE_REFRESH_MS });
}

/** Read only while the history is open. */
export function useHealthEvents(member: number, enabled: boolean) {
  return useQuery({ queryKey: queryKeys.healthEvents(member), queryFn: () => telemetryApi.listHealthEvents(member), enabled, refetchInterval: LIVE_REFRESH_MS });
}
