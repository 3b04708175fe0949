/** Battery, free storage and CPU temperature of a satellite as sparklines (uPlot), newest on the right. */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useTelemetry } from '../api/hooks/satellites';
import { useT } from '../i18n';
import { useFormat } from '../session';
import { EmptyNote, ErrorText } from './ui';

function Sparkline({ label, xs, ys, format }: { label: string; xs: number[]; ys: Array<number | null>; format: (v: number) => string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!box.current) return;
    const color = getComputedStyle(box.current).color || '#1f6f4a';
    const plot = new uPlot(
      {
        width: 180,
        height: 40,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: true } },
        axes: [{ show: false }, { show: false }],
        series: [{}, { stroke: color, width: 1.5, spanGaps: true }],
      },
      [xs, ys],
      box.current,
    );
    return () => plot.destroy();
  }, [xs, ys]);
  const last = [...ys].reverse().find((v) => v !== null);
  return (
    <figure className="sparkline" aria-label={`${label}: ${last === undefined || last === null ? '—' : format(last)}`}>
      <figcaption>
        {label} <strong>{last === undefined || last === null ? '—' : format(last)}</strong>
      </figcaption>
      <div ref={box} aria-hidden="true" />
    </figure>
  );
}

export function TelemetrySparklines({ satelliteId }: { satelliteId: string }) {
  const t = useT();
  const fmt = useFormat();
  const q = useTelemetry(satelliteId);
  const samples = q.data?.telemetry ?? [];
  if (q.error) return <ErrorText error={q.error} />;
  if (q.isLoading) return null;
  if (samples.length === 0) return <EmptyNote>{t('fleet.telemetry.none')}</EmptyNote>;
  const xs = samples.map((s) => Date.parse(s.at ?? '') / 1000);
  return (
    <div className="row sparklines" data-testid="telemetry">
      <Sparkline
        label={t('fleet.telemetry.battery')}
        xs={xs}
        ys={samples.map((s) => s.batteryLevel)}
        format={(v) => `${Math.round(v * 100)} %`}
      />
      <Sparkline label={t('fleet.telemetry.storage')} xs={xs} ys={samples.map((s) => s.storageFreeBytes)} format={fmt.bytes} />
      <Sparkline
        label={t('fleet.telemetry.temperature')}
        xs={xs}
        ys={samples.map((s) => s.cpuTemp)}
        format={(v) => `${fmt.fixed(v, 1)} °C`}
      />
    </div>
  );
}
