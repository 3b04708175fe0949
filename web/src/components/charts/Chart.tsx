/**
 * The dashboard's charts: small wrappers around uPlot (the one charting library, as in
 * Telemetry.tsx). Each is a <figure> with a visible title; the canvas is hidden from screen
 * readers and a table of the same figures follows in a <details>, so the numbers stay reachable.
 */
import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './charts.css';
import { categoryTicks } from './ticks';
import { useT } from '../../i18n';

export interface Series {
  label: string;
  values: Array<number | null>;
}

const PALETTE = ['--accent', '--focus', '--warn', '--danger', '--ok', '--muted'];

/** Colour `i` of the palette, read from the theme's custom properties so dark mode follows. */
function color(el: Element, i: number): string {
  const v = getComputedStyle(el)
    .getPropertyValue(PALETTE[i % PALETTE.length])
    .trim();
  return v || '#1f6f4a';
}

/** Width of the box, kept current, so a chart fills its column and follows resizes. */
function useWidth(box: React.RefObject<HTMLDivElement | null>): number {
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    setWidth(el.clientWidth);
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, [box]);
  return width;
}

function UPlot({ options, data }: { options: (el: HTMLElement, width: number) => uPlot.Options; data: uPlot.AlignedData }) {
  const box = useRef<HTMLDivElement>(null);
  const width = useWidth(box);
  useEffect(() => {
    if (!box.current || width === 0) return;
    const plot = new uPlot(options(box.current, width), data, box.current);
    return () => plot.destroy();
  }, [options, data, width]);
  return <div ref={box} className="chart-canvas" aria-hidden="true" />;
}

/** Title, the chart, and the same figures as a table for those who cannot see the chart. */
function Frame({
  title,
  testId,
  head,
  rows,
  children,
}: {
  title: string;
  testId?: string;
  head: string[];
  rows: Array<Array<string | number>>;
  children: ReactNode;
}) {
  const t = useT();
  return (
    <figure className="chart" data-testid={testId}>
      <figcaption>{title}</figcaption>
      {children}
      <details className="chart-table">
        <summary>{t('stats.chart.table')}</summary>
        <div className="table-wrap">
          <table>
            <caption className="sr-only">{title}</caption>
            <thead>
              <tr>
                {head.map((h) => (
                  <th key={h} scope="col">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i}>
                  {r.map((c, j) =>
                    j === 0 ? (
                      <th key={j} scope="row">
                        {c}
                      </th>
                    ) : (
                      <td key={j}>{c}</td>
                    ),
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

/**
 * Lines over time: `xs` in Unix seconds (or plain numbers with `time: false`), one line per
 * series; `formatX` names an x value in the axis, the legend and the table.
 */
export function LineChart({
  title,
  xs,
  series,
  formatX,
  formatY = (v) => String(v),
  time = true,
  height = 220,
  testId,
}: {
  title: string;
  xs: number[];
  series: Series[];
  formatX: (x: number) => string;
  formatY?: (v: number) => string;
  time?: boolean;
  height?: number;
  testId?: string;
}) {
  const data = useMemo<uPlot.AlignedData>(() => [xs, ...series.map((s) => s.values)], [xs, series]);
  const options = useMemo(
    () => (el: HTMLElement, width: number) =>
      ({
        width,
        height,
        scales: { x: { time } },
        legend: { show: series.length > 1 },
        axes: [
          { stroke: axisColor(el), values: (_u: uPlot, ticks: number[]) => ticks.map(formatX) },
          { stroke: axisColor(el), values: (_u: uPlot, ticks: number[]) => ticks.map(formatY) },
        ],
        series: [
          { value: (_u: uPlot, v: number | null) => (v === null ? '—' : formatX(v)) },
          ...series.map((s, i) => ({ label: s.label, stroke: color(el, i), width: 2, points: { show: xs.length < 60 } })),
        ],
      }) satisfies uPlot.Options,
    [series, time, height, formatX, formatY, xs.length],
  );
  return (
    <Frame
      title={title}
      testId={testId}
      head={['', ...series.map((s) => s.label)]}
      rows={xs.map((x, i) => [formatX(x), ...series.map((s) => (s.values[i] === null ? '—' : formatY(s.values[i]!)))])}
    >
      <UPlot options={options} data={data} />
    </Frame>
  );
}

/** Bars over categories (hours, species, bins): `labels[i]` names bar i on the axis and in the table. */
export function BarChart({
  title,
  labels,
  values,
  valueLabel,
  formatY = (v) => String(v),
  height = 220,
  testId,
}: {
  title: string;
  labels: string[];
  values: number[];
  valueLabel: string;
  formatY?: (v: number) => string;
  height?: number;
  testId?: string;
}) {
  const data = useMemo<uPlot.AlignedData>(() => [labels.map((_, i) => i), values], [labels, values]);
  const options = useMemo(
    () => (el: HTMLElement, width: number) =>
      ({
        width,
        height,
        scales: { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        legend: { show: false },
        cursor: { points: { show: false } },
        axes: [
          {
            stroke: axisColor(el),
            splits: () => categoryTicks(labels, width),
            values: (_u: uPlot, ticks: number[]) => ticks.map((i) => labels[i] ?? ''),
          },
          { stroke: axisColor(el), values: (_u: uPlot, ticks: number[]) => ticks.map(formatY) },
        ],
        series: [
          {},
          {
            label: valueLabel,
            fill: color(el, 0),
            stroke: color(el, 0),
            paths: uPlot.paths.bars!({ size: [0.8, 60], align: 0 }),
            points: { show: false },
          },
        ],
      }) satisfies uPlot.Options,
    [labels, valueLabel, height, formatY],
  );
  return (
    <Frame title={title} testId={testId} head={['', valueLabel]} rows={labels.map((l, i) => [l, formatY(values[i] ?? 0)])}>
      <UPlot options={options} data={data} />
    </Frame>
  );
}

/** A histogram: bins [from, to) with counts, drawn as touching bars. */
export function Histogram({
  title,
  bins,
  formatEdge,
  valueLabel,
  testId,
}: {
  title: string;
  bins: Array<{ from: number; to: number; count: number }>;
  formatEdge: (x: number) => string;
  valueLabel: string;
  testId?: string;
}) {
  const labels = useMemo(() => bins.map((b) => `${formatEdge(b.from)}–${formatEdge(b.to)}`), [bins, formatEdge]);
  const values = useMemo(() => bins.map((b) => b.count), [bins]);
  return <BarChart title={title} labels={labels} values={values} valueLabel={valueLabel} testId={testId} height={180} />;
}

function axisColor(el: Element): string {
  return getComputedStyle(el).getPropertyValue('--muted').trim() || '#5d6167';
}
