import { useMemo } from 'react';
import { ErrorState, LoadingState } from '@/components';
import { useServiceMetrics } from '../hooks/useTelemetry';
import { alignSeries, formatByteRate } from '../types';
import { TimeSeriesChart } from './TimeSeriesChart';

/** A service's last hour in three graphs: requests and errors, connections, bytes in and out. */
export function ServiceGraphs({ serviceId, name }: { serviceId: number; name: string }) {
  const metrics = useServiceMetrics(serviceId);
  const data = metrics.data;
  const aligned = useMemo(() => (data ? alignSeries(data, data.series.find((s) => s.id === serviceId)) : null), [data, serviceId]);
  if (metrics.isPending) return <LoadingState label="Loading the figures…" />;
  if (metrics.isError) return <ErrorState error={metrics.error} onRetry={() => void metrics.refetch()} />;
  if (!aligned) return null;
  const { times, values } = aligned;
  return (
    <div className="chart-grid">
      <div>
        <h3>Requests and errors per second</h3>
        <TimeSeriesChart
          variant="full"
          label={`Requests and errors per second of ${name}`}
          times={times}
          series={[
            { label: 'Requests/s', values: values.requests_per_s, color: 'accent' },
            { label: 'Errors/s', values: values.errors_per_s, color: 'danger' },
          ]}
        />
      </div>
      <div>
        <h3>Connections</h3>
        <TimeSeriesChart variant="full" label={`Connections of ${name}`} times={times} series={[{ label: 'Connections', values: values.connections, color: 'info' }]} />
      </div>
      <div>
        <h3>Traffic</h3>
        <TimeSeriesChart
          variant="full"
          label={`Bytes per second in and out of ${name}`}
          times={times}
          format={formatByteRate}
          series={[
            { label: 'In', values: values.bytes_in_per_s, color: 'success' },
            { label: 'Out', values: values.bytes_out_per_s, color: 'warning' },
          ]}
        />
      </div>
    </div>
  );
}
