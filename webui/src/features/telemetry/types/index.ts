import type { Schemas } from '@/lib/api';

// The telemetry API's answers (api/telemetry), by their OpenAPI names.

export type ServiceState = Schemas['ServiceStateEnum'];
export type HealthStatus = Schemas['HealthStatusEnum'];
export type NodeState = Schemas['NodeStateEnum'];

/** A virtual service as the dashboard shows it: its listener, state and current figures. */
export type ServiceOverview = Schemas['OverviewService'];
export type NodeOverview = Schemas['OverviewNode'];
export type RevisionOverview = Schemas['OverviewRevision'];
export type Overview = Schemas['Overview'];

/** The figures of one time bucket; a missing bucket is a gap, not a zero. */
export type MetricPoint = Schemas['Point'];
export type MetricSeries = Schemas['Series'];
export type Metrics = Schemas['Metrics'];
export type MetricName = Exclude<keyof MetricPoint, 't'>;

/** A member's last check result on one node. */
export type MemberHealth = Schemas['MemberHealth'];
/** A change of a member's health on one node, newest first. */
export type HealthEvent = Schemas['HealthEvent'];

export type HealthFilter = { pool?: number; member?: number; service?: number };
/** How far back (minutes) and how long a bucket is (seconds: one of the API's steps). */
export type MetricsWindow = { minutes: number; step: 10 | 30 | 60 | 300 };
export * from './series';
