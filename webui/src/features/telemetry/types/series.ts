import type { MetricName, MetricSeries, Metrics } from './index';

/** A series on a regular time axis: `times` in Unix seconds, `null` where no bucket was reported. */
export type AlignedSeries = { times: number[]; values: Record<MetricName, (number | null)[]> };

const METRICS: readonly MetricName[] = ['connections', 'requests_per_s', 'errors_per_s', 'bytes_in_per_s', 'bytes_out_per_s'];

/**
 * Lays a series on every bucket from `start` to `end`, so a bucket the agents did not report
 * is a gap in the graph instead of a line drawn across the silence.
 */
export function alignSeries(metrics: Pick<Metrics, 'start' | 'end' | 'step_s'>, series: MetricSeries | undefined): AlignedSeries {
  const step = Math.max(1, metrics.step_s);
  const start = Math.floor(Date.parse(metrics.start) / 1000 / step) * step;
  const end = Math.floor(Date.parse(metrics.end) / 1000);
  const times: number[] = [];
  for (let t = start; t <= end && times.length < 10_000; t += step) times.push(t);
  const index = new Map(times.map((t, i) => [t, i]));
  const values = Object.fromEntries(METRICS.map((m) => [m, times.map((): number | null => null)])) as AlignedSeries['values'];
  for (const point of series?.points ?? []) {
    const slot = index.get(Math.floor(Date.parse(point.t) / 1000 / step) * step);
    if (slot === undefined) continue;
    for (const m of METRICS) values[m][slot] = point[m];
  }
  return { times, values };
}

const UNITS = ['', 'k', 'M', 'G', 'T'];

/** 0, 3.2, 45, 1.2k, 3.4M: short enough for a tile. */
export function formatQuantity(value: number | null | undefined): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  let scaled = value;
  let unit = 0;
  while (Math.abs(scaled) >= 1000 && unit < UNITS.length - 1) {
    scaled /= 1000;
    unit += 1;
  }
  const digits = Math.abs(scaled) >= 100 || Number.isInteger(scaled) ? 0 : 1;
  return `${scaled.toFixed(digits)}${UNITS[unit]}`;
}

/** Bytes per second as B/s, kB/s, MB/s. */
export function formatByteRate(value: number | null | undefined): string {
  return value === null || value === undefined ? '–' : `${formatQuantity(value)}B/s`;
}

/** Latest, peak and average of the reported buckets, for the text beside a graph. */
export function summarize(values: readonly (number | null)[]): { latest: number | null; peak: number | null; average: number | null; reported: number } {
  const known = values.filter((v): v is number => v !== null);
  if (known.length === 0) return { latest: null, peak: null, average: null, reported: 0 };
  const latest = [...values].reverse().find((v) => v !== null) ?? null;
  return { latest, peak: Math.max(...known), average: known.reduce((a, b) => a + b, 0) / known.length, reported: known.length };
}
