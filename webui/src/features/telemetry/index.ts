export { HealthEventsTable, MemberHealthSummary, describeCheck } from './components/MemberHealth';
export { MemberTraffic } from './components/MemberTraffic';
export { ServiceFigures } from './components/ServiceFigures';
export { ServiceGraphs } from './components/ServiceGraphs';
export { HealthStatusBadge, ServiceStateBadge } from './components/StatusBadges';
export { type ChartColor, type ChartSeries, TimeSeriesChart } from './components/TimeSeriesChart';
export { useOnScreen } from './hooks/useOnScreen';
export { LAST_HOUR, LIVE_REFRESH_MS, useHealth, useMemberMetrics, useOverview, useServiceMetrics } from './hooks/useTelemetry';
export * from './types';
