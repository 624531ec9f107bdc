import { act, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TimeSeriesChart } from './TimeSeriesChart';

const plots = vi.hoisted(() => ({ created: [] as { options: { series: { label?: string; stroke?: string }[]; height: number }; data: unknown[]; destroyed: boolean; setData: (data: unknown[]) => void }[] }));

vi.mock('uplot', () => ({
  default: class {
    options;
    data;
    destroyed = false;
    constructor(options: never, data: unknown[]) {
      this.options = options;
      this.data = data;
      plots.created.push(this as never);
    }
    setData(data: unknown[]) {
      this.data = data;
    }
    setSize() {}
    destroy() {
      this.destroyed = true;
    }
  },
}));

const times = [600, 660, 720, 780];

describe('TimeSeriesChart', () => {
  beforeEach(() => {
    plots.created.length = 0;
  });
  afterEach(() => {
    document.documentElement.style.removeProperty('--danger');
  });

  it('tells screen readers the figures and hides the canvas from them', () => {
    render(<TimeSeriesChart label="Requests/s of web" times={times} series={[{ label: 'Requests/s', values: [2, null, 5, 3] }]} />);
    const figure = screen.getByRole('figure', { name: /Requests\/s of web, last hour/ });
    expect(figure).toHaveAccessibleName('Requests/s of web, last hour. Requests/s: now 3, peak 5, average 3.3 (3 of 4 intervals reported).');
    expect(figure.querySelector('.chart-canvas')).toHaveAttribute('aria-hidden', 'true');
    // A sparkline has no table: the sentence is enough.
    expect(within(figure).queryByRole('table')).not.toBeInTheDocument();
  });

  it('says when nothing was reported', () => {
    render(<TimeSeriesChart label="Errors/s of web" times={times} series={[{ label: 'Errors/s', values: [null, null, null, null] }]} />);
    expect(screen.getByRole('figure')).toHaveAccessibleName('Errors/s of web, last hour. Errors/s: no data.');
  });

  it('draws the series with uPlot in the theme colours, updates in place and cleans up', async () => {
    document.documentElement.style.setProperty('--danger', '#b42318');
    const series = [{ label: 'Errors/s', values: [1, 2, null, 4], color: 'danger' as const }];
    const { rerender, unmount } = render(<TimeSeriesChart label="Errors/s of web" times={times} series={series} />);
    await waitFor(() => expect(plots.created).toHaveLength(1));
    const plot = plots.created[0]!;
    expect(plot.data).toEqual([times, [1, 2, null, 4]]);
    expect(plot.options.series[1]).toMatchObject({ label: 'Errors/s', stroke: '#b42318' });
    expect(plot.options.height).toBe(36);

    rerender(<TimeSeriesChart label="Errors/s of web" times={times} series={[{ ...series[0]!, values: [1, 2, 3, 9] }]} />);
    await waitFor(() => expect(plot.data).toEqual([times, [1, 2, 3, 9]]));
    expect(plots.created).toHaveLength(1);

    unmount();
    expect(plot.destroyed).toBe(true);
  });

  it('redraws in the new colours when the theme switches', async () => {
    document.documentElement.style.setProperty('--danger', '#b42318');
    render(<TimeSeriesChart label="Errors/s of web" times={times} series={[{ label: 'Errors/s', values: [1, 2, 3, 4], color: 'danger' }]} />);
    await waitFor(() => expect(plots.created).toHaveLength(1));
    document.documentElement.style.setProperty('--danger', '#f07167');
    await act(async () => document.documentElement.setAttribute('data-theme', 'dark'));
    await waitFor(() => expect(plots.created).toHaveLength(2));
    expect(plots.created[0]!.destroyed).toBe(true);
    expect(plots.created[1]!.options.series[1]).toMatchObject({ stroke: '#f07167' });
    await act(async () => document.documentElement.removeAttribute('data-theme'));
  });

  it('gives a full graph a table of the reported values', () => {
    render(
      <TimeSeriesChart
        variant="full"
        label="Traffic of web"
        times={times}
        format={(v) => (v === null ? '–' : `${v} B/s`)}
        series={[
          { label: 'In', values: [10, null, 30, 40] },
          { label: 'Out', values: [1, null, 3, null] },
        ]}
      />,
    );
    const table = screen.getByRole('table', { name: 'Traffic of web' });
    const rows = within(table).getAllByRole('row');
    // Header + the three buckets with a report; the silent one is left out.
    expect(rows).toHaveLength(4);
    expect(within(rows[3]!).getAllByRole('cell').map((c) => c.textContent)).toEqual(['40 B/s', '–']);
  });
});
