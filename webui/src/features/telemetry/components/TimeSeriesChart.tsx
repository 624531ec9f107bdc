import { useEffect, useId, useMemo, useRef, useState } from 'react';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatQuantity, summarize } from '../types';

/** Colours are the theme's CSS variables, read when the chart is drawn (and again when the OS theme flips). */
export type ChartColor = 'accent' | 'success' | 'warning' | 'danger' | 'info';

export type ChartSeries = { label: string; values: readonly (number | null)[]; color?: ChartColor };

type TimeSeriesChartProps = {
  /** What the graph shows, for the text alternative ("Requests per second of web"). */
  label: string;
  /** Unix seconds, one per bucket, shared by every series. */
  times: readonly number[];
  series: readonly ChartSeries[];
  format?: (value: number | null) => string;
  /** `spark`: a tile's tiny line; `full`: axes, legend, and a table for screen readers. */
  variant?: 'spark' | 'full';
  windowLabel?: string;
};

const HEIGHT = { spark: 36, full: 180 } as const;
const timeOfDay = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

function cssColor(element: Element, name: string): string {
  return getComputedStyle(element).getPropertyValue(`--${name}`).trim() || 'currentColor';
}

const currentScheme = () => {
  const chosen = document.documentElement.getAttribute('data-theme');
  const dark = window.matchMedia?.('(prefers-color-scheme: dark)').matches;
  return chosen ?? (dark ? 'dark' : 'light');
};

/**
 * Changes when the console's theme does (the theme switch sets `data-theme` on <html>; without
 * it the OS decides), so the chart re-reads its colours.
 */
function useColorScheme(): string {
  const [scheme, setScheme] = useState(currentScheme);
  useEffect(() => {
    const update = () => setScheme(currentScheme());
    const query = window.matchMedia?.('(prefers-color-scheme: dark)');
    query?.addEventListener('change', update);
    const observer = new MutationObserver(update);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    return () => {
      query?.removeEventListener('change', update);
      observer.disconnect();
    };
  }, []);
  return scheme;
}

function chartOptions(element: HTMLElement, props: TimeSeriesChartProps, width: number): uPlot.Options {
  const variant = props.variant ?? 'spark';
  const format = props.format ?? formatQuantity;
  const full = variant === 'full';
  const muted = cssColor(element, 'text-muted');
  const grid = { stroke: cssColor(element, 'border'), width: 1 };
  return {
    width,
    height: HEIGHT[variant],
    legend: { show: full },
    cursor: { show: full, drag: { x: false, y: false } },
    select: { show: false, left: 0, top: 0, width: 0, height: 0 },
    padding: full ? undefined : [2, 0, 2, 0],
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [
      { show: full, stroke: muted, grid, ticks: grid },
      { show: full, stroke: muted, grid, ticks: grid, size: 56, values: (_u, splits) => splits.map((v) => format(v)) },
    ],
    series: [
      { value: (_u, t) => (t === null ? '' : timeOfDay.format(new Date(t * 1000))) },
      ...props.series.map((s) => ({
        label: s.label,
        stroke: cssColor(element, s.color ?? 'accent'),
        width: full ? 2 : 1.5,
        spanGaps: false,
        value: (_u: uPlot, v: number | null) => format(v),
      })),
    ],
  };
}

function useChartData(times: readonly number[], series: readonly ChartSeries[]): uPlot.AlignedData {
  return useMemo(() => [times as number[], ...series.map((s) => s.values as (number | null)[])], [times, series]);
}

/** The graph's text alternative: latest, peak and average of each series. */
function describe(props: TimeSeriesChartProps): string {
  const format = props.format ?? formatQuantity;
  const window = props.windowLabel ?? 'last hour';
  const parts = props.series.map((s) => {
    const { latest, peak, average, reported } = summarize(s.values);
    if (!reported) return `${s.label}: no data`;
    return `${s.label}: now ${format(latest)}, peak ${format(peak)}, average ${format(average)} (${reported} of ${s.values.length} intervals reported)`;
  });
  return `${props.label}, ${window}. ${parts.join('; ')}.`;
}

function DataTable({ props }: { props: TimeSeriesChartProps }) {
  const format = props.format ?? formatQuantity;
  const rows = props.times.map((t, i) => ({ t, values: props.series.map((s) => s.values[i] ?? null) })).filter((r) => r.values.some((v) => v !== null));
  return (
    <table className="visually-hidden">
      <caption>{props.label}</caption>
      <thead>
        <tr>
          <th scope="col">Time</th>
          {props.series.map((s) => (
            <th scope="col" key={s.label}>{s.label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.t}>
            <th scope="row">{timeOfDay.format(new Date(r.t * 1000))}</th>
            {r.values.map((v, i) => (
              <td key={props.series[i]!.label}>{format(v)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * A time-series graph drawn by uPlot (loaded on first use), with a text summary for screen
 * readers (and a table of the values for full charts): the canvas itself is hidden from them.
 */
export function TimeSeriesChart(props: TimeSeriesChartProps) {
  const { times, series, variant = 'spark' } = props;
  const container = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const latest = useRef(props);
  const data = useChartData(times, series);
  const scheme = useColorScheme();
  const captionId = useId();
  const shape = `${variant}|${series.map((s) => `${s.label}:${s.color ?? ''}`).join(',')}`;
  useEffect(() => {
    latest.current = props;
  });

  // Built once per shape and theme; new figures only replace the data.
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    let cancelled = false;
    let resize: ResizeObserver | undefined;
    import('uplot')
      .then(({ default: UPlot }) => {
        if (cancelled) return;
        const width = element.clientWidth || 240;
        const chart = new UPlot(chartOptions(element, latest.current, width), [[...latest.current.times], ...latest.current.series.map((s) => [...s.values])], element);
        plot.current = chart;
        if (typeof ResizeObserver !== 'undefined') {
          resize = new ResizeObserver(() => chart.setSize({ width: element.clientWidth || width, height: HEIGHT[variant] }));
          resize.observe(element);
        }
      })
      .catch(() => {
        // Without the graph the text summary still tells the figures.
      });
    return () => {
      cancelled = true;
      resize?.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape, scheme, variant]);

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return (
    <figure className={`chart chart-${variant}`} aria-labelledby={captionId}>
      <div ref={container} className="chart-canvas" aria-hidden="true" />
      <figcaption id={captionId} className="visually-hidden">
        {describe(props)}
      </figcaption>
      {variant === 'full' ? <DataTable props={props} /> : null}
    </figure>
  );
}
