import { useMemo, useRef } from 'react';
import { useOnScreen } from '../hooks/useOnScreen';
import { useServiceMetrics } from '../hooks/useTelemetry';
import { type AlignedSeries, alignSeries, formatByteRate, formatQuantity, type ServiceOverview } from '../types';
import { type ChartColor, TimeSeriesChart } from './TimeSeriesChart';

type Figure = {
  label: string;
  now: string;
  series: { label: string; metric: keyof AlignedSeries['values']; color: ChartColor }[];
  format: (value: number | null) => string;
};

function figures(service: ServiceOverview): Figure[] {
  return [
    { label: 'Requests/s', now: formatQuantity(service.requests_per_s), format: formatQuantity, series: [{ label: 'Requests/s', metric: 'requests_per_s', color: 'accent' }] },
    { label: 'Connections', now: formatQuantity(service.connections), format: formatQuantity, series: [{ label: 'Connections', metric: 'connections', color: 'info' }] },
    { label: 'Errors/s', now: formatQuantity(service.errors_per_s), format: formatQuantity, series: [{ label: 'Errors/s', metric: 'errors_per_s', color: 'danger' }] },
    {
      label: 'In / out',
      now: `${formatByteRate(service.bytes_in_per_s)} / ${formatByteRate(service.bytes_out_per_s)}`,
      format: formatByteRate,
      series: [
        { label: 'Bytes in/s', metric: 'bytes_in_per_s', color: 'success' },
        { label: 'Bytes out/s', metric: 'bytes_out_per_s', color: 'warning' },
      ],
    },
  ];
}

/**
 * A service's current figures, each with its last hour as a sparkline. The history is read
 * (and polled) only while the figures are on screen, so a long dashboard stays light.
 */
export function ServiceFigures({ service }: { service: ServiceOverview }) {
  const ref = useRef<HTMLDListElement>(null);
  const onScreen = useOnScreen(ref);
  const metrics = useServiceMetrics(service.id, { enabled: onScreen });
  const data = metrics.data;
  const aligned = useMemo(() => (data ? alignSeries(data, data.series.find((s) => s.id === service.id)) : null), [data, service.id]);
  return (
    <dl className="figures" ref={ref}>
      {figures(service).map((figure) => (
        <div className="figure" key={figure.label}>
          <dt>{figure.label}</dt>
          <dd>
            <span className="figure-value">{figure.now}</span>
            {aligned ? (
              <TimeSeriesChart
                label={`${figure.label} of ${service.name}`}
                times={aligned.times}
                series={figure.series.map((s) => ({ label: s.label, color: s.color, values: aligned.values[s.metric] }))}
                format={figure.format}
              />
            ) : null}
          </dd>
        </div>
      ))}
    </dl>
  );
}
