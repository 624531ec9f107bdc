import { describe, expect, it } from 'vitest';
import { alignSeries, formatByteRate, formatQuantity, summarize } from './series';

const point = (t: string, requests: number) => ({
  t,
  connections: 1,
  requests_per_s: requests,
  errors_per_s: 0,
  bytes_in_per_s: 100,
  bytes_out_per_s: 200,
});

describe('alignSeries', () => {
  it('puts every bucket on the axis and leaves unreported ones as gaps', () => {
    const metrics = { step_s: 60, start: '2024-01-01T10:00:00Z', end: '2024-01-01T10:04:00Z' };
    const series = { id: 1, name: 'web', points: [point('2024-01-01T10:01:00Z', 5), point('2024-01-01T10:03:00Z', 7)] };
    const aligned = alignSeries(metrics, series);
    const t0 = Date.parse('2024-01-01T10:00:00Z') / 1000;
    expect(aligned.times).toEqual([t0, t0 + 60, t0 + 120, t0 + 180, t0 + 240]);
    expect(aligned.values.requests_per_s).toEqual([null, 5, null, 7, null]);
    expect(aligned.values.bytes_out_per_s).toEqual([null, 200, null, 200, null]);
  });

  it('gives an empty series all gaps', () => {
    const aligned = alignSeries({ step_s: 60, start: '2024-01-01T10:00:00Z', end: '2024-01-01T10:01:00Z' }, undefined);
    expect(aligned.values.connections).toEqual([null, null]);
  });
});

describe('figures', () => {
  it('formats quantities and byte rates short', () => {
    expect(formatQuantity(0)).toBe('0');
    expect(formatQuantity(3.25)).toBe('3.3');
    expect(formatQuantity(1234)).toBe('1.2k');
    expect(formatQuantity(5_600_000)).toBe('5.6M');
    expect(formatQuantity(null)).toBe('–');
    expect(formatByteRate(2048)).toBe('2.0kB/s');
  });

  it('summarizes the reported buckets only', () => {
    expect(summarize([1, null, 5, 3, null])).toEqual({ latest: 3, peak: 5, average: 3, reported: 3 });
    expect(summarize([null])).toEqual({ latest: null, peak: null, average: null, reported: 0 });
  });
});
