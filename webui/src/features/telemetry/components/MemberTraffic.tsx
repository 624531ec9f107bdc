import { type AlignedSeries, formatByteRate, formatQuantity, summarize } from '../types';
import { TimeSeriesChart } from './TimeSeriesChart';

/** A member's current traffic (last reported bucket) with its requests over the last hour. */
export function MemberTraffic({ name, series }: { name: string; series: AlignedSeries | null }) {
  if (!series || summarize(series.values.connections).reported + summarize(series.values.requests_per_s).reported === 0) {
    return <span className="cell-note">no traffic reported</span>;
  }
  const now = (metric: keyof AlignedSeries['values']) => summarize(series.values[metric]).latest;
  return (
    <div className="member-traffic">
      <div>
        {formatQuantity(now('requests_per_s'))} req/s, {formatQuantity(now('connections'))} conn
      </div>
      <div className="cell-note">
        in {formatByteRate(now('bytes_in_per_s'))}, out {formatByteRate(now('bytes_out_per_s'))}
      </div>
      <TimeSeriesChart label={`Requests per second to ${name}`} times={series.times} series={[{ label: 'Requests/s', values: series.values.requests_per_s, color: 'accent' }]} />
    </div>
  );
}
