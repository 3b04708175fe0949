/**
 * The PDF detections report (issue 18), drawn with pdfkit from ReportData: title and team, the period
 * in local dates, when it was generated; the totals; the top species; a trend chart (per day, or per
 * week for periods over 366 days) and an hourly activity chart, both drawn as vectors (no raster
 * images); the satellites; every species with first and last heard in local time. Tables break across
 * pages and repeat their header; every page has "Page n of m" in its footer (pages are buffered and
 * numbered once the content is drawn).
 *
 * Fonts: pdfkit's built-in Helvetica covers Latin-1 only (WinAnsi: "Grünfink" works, Cyrillic or
 * Greek names do not). When DejaVu Sans is installed (Debian/Ubuntu fonts-dejavu-core and the usual
 * other locations below) it is embedded instead (subset), which covers Latin, Greek and Cyrillic;
 * this is detected at runtime on every render and falls back to Helvetica silently. CJK names need
 * a CJK font and would still print as missing glyphs.
 *
 * The returned document is a Readable stream: the caller pipes it (e.g. to the HTTP reply).
 * `doc.end()` has been called already.
 */
import fs from 'node:fs';
import PDFDocument from 'pdfkit';
import { type ReportData, type ReportLanguage, periodDays, zonedClock } from './data.ts';

const EN = {
  team: 'Team',
  period: 'Period',
  timeZone: 'Time zone',
  generated: 'Generated',
  summary: 'Summary',
  detections: 'Detections',
  species: 'Species',
  satellites: 'Satellites',
  confirmed: 'Confirmed',
  topSpecies: 'Top species',
  perDay: 'Detections per day',
  perWeek: 'Detections per week (7-day buckets from the first day)',
  hourly: 'Activity by hour of day (local time)',
  allSpecies: 'All species',
  commonName: 'Common name',
  scientificName: 'Scientific name',
  satellite: 'Satellite',
  firstHeard: 'First heard',
  lastHeard: 'Last heard',
  count: 'Count',
  best: 'Best conf.',
  rank: '#',
  continued: '(continued)',
  none: 'No detections in this period.',
  page: 'Page {n} of {m}',
  locale: 'en-GB',
};

type Labels = Record<keyof typeof EN, string>;

/** Labels by language (data.language, default en). */
const LABELS: Record<ReportLanguage, Labels> = {
  en: EN,
  de: {
    team: 'Team',
    period: 'Zeitraum',
    timeZone: 'Zeitzone',
    generated: 'Erstellt',
    summary: 'Übersicht',
    detections: 'Erkennungen',
    species: 'Arten',
    satellites: 'Satelliten',
    confirmed: 'Bestätigt',
    topSpecies: 'Häufigste Arten',
    perDay: 'Erkennungen pro Tag',
    perWeek: 'Erkennungen pro Woche (7-Tage-Abschnitte ab dem ersten Tag)',
    hourly: 'Aktivität nach Tageszeit (Ortszeit)',
    allSpecies: 'Alle Arten',
    commonName: 'Name',
    scientificName: 'Wissenschaftlicher Name',
    satellite: 'Satellit',
    firstHeard: 'Zuerst gehört',
    lastHeard: 'Zuletzt gehört',
    count: 'Anzahl',
    best: 'Beste Konf.',
    rank: 'Nr.',
    continued: '(Fortsetzung)',
    none: 'Keine Erkennungen in diesem Zeitraum.',
    page: 'Seite {n} von {m}',
    locale: 'de-DE',
  },
};

/** Where a Unicode TTF is looked for (regular, bold), first found wins. */
const FONT_CANDIDATES: Array<[string, string]> = [
  ['/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf'],
  ['/usr/share/fonts/dejavu/DejaVuSans.ttf', '/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf'],
  ['/usr/share/fonts/TTF/DejaVuSans.ttf', '/usr/share/fonts/TTF/DejaVuSans-Bold.ttf'],
  ['/usr/share/fonts/ttf-dejavu/DejaVuSans.ttf', '/usr/share/fonts/ttf-dejavu/DejaVuSans-Bold.ttf'],
];

/** The fonts a render uses: a DejaVu Sans pair if one is installed, else the built-in Helvetica. */
export function reportFonts(): { regular: string; bold: string; embedded: boolean } {
  for (const [regular, bold] of FONT_CANDIDATES) {
    try {
      if (fs.statSync(regular).isFile()) return { regular, bold: fs.existsSync(bold) ? bold : regular, embedded: true };
    } catch {}
  }
  return { regular: 'Helvetica', bold: 'Helvetica-Bold', embedded: false };
}

const MARGIN = 50;
const INK = '#222222';
const MUTED = '#666666';
const RULE = '#bbbbbb';
const BAR = '#3a7d44';

interface Column {
  header: string;
  /** Share of the content width. */
  width: number;
  align?: 'left' | 'right';
}

export interface RenderOptions {
  /** Use the built-in Helvetica even when DejaVu Sans is installed (tests of the fallback). */
  builtinFonts?: boolean;
}

export function renderReport(data: ReportData, options: RenderOptions = {}): PDFKit.PDFDocument {
  const L: Labels = LABELS[data.language ?? 'en'];
  const fonts = options.builtinFonts ? { regular: 'Helvetica', bold: 'Helvetica-Bold', embedded: false } : reportFonts();
  const doc = new PDFDocument({
    size: data.paperSize === 'letter' ? 'LETTER' : 'A4',
    margins: { top: MARGIN, bottom: MARGIN, left: MARGIN, right: MARGIN },
    bufferPages: true,
    lang: data.language ?? 'en',
    info: { Title: `${data.title} — ${data.teamName}`, Author: 'Chorus', Creator: 'Chorus', CreationDate: new Date(data.generatedAt) },
  });
  doc.registerFont('body', fonts.regular);
  doc.registerFont('bold', fonts.bold);

  const clock = zonedClock(data.timeZone);
  const num = new Intl.NumberFormat(L.locale);
  // The language's own percent form: 93% / 93 % (issue 36 point 5).
  const pct = new Intl.NumberFormat(L.locale, { style: 'percent', maximumFractionDigits: 0 });
  const localDateTime = (iso: string) => {
    const p = clock(Date.parse(iso));
    return `${p.day} ${p.time}`;
  };
  const left = doc.page.margins.left;
  const width = doc.page.width - doc.page.margins.left - doc.page.margins.right;
  const bottom = () => doc.page.height - doc.page.margins.bottom;

  const ensure = (height: number) => {
    if (doc.y + height > bottom()) doc.addPage();
  };
  const heading = (text: string, room: number) => {
    ensure(room + 24);
    doc.moveDown(0.6);
    doc.font('bold').fontSize(13).fillColor(INK).text(text, left, doc.y, { width });
    doc.moveDown(0.3);
  };

  // Title block.
  const days = periodDays(data.period, data.timeZone);
  doc.font('bold').fontSize(20).fillColor(INK).text(data.title, left, doc.page.margins.top, { width });
  doc.font('body').fontSize(12).text(`${L.team}: ${data.teamName}`, { width });
  doc.moveDown(0.3);
  doc.fontSize(10).fillColor(MUTED);
  doc.text(`${L.period}: ${days.first} – ${days.last}`, { width });
  doc.text(`${L.timeZone}: ${data.timeZone}`, { width });
  doc.text(`${L.generated}: ${localDateTime(data.generatedAt)}`, { width });

  // Totals: four boxes in a row.
  heading(L.summary, 50);
  {
    const items: Array<[string, number]> = [
      [L.detections, data.totals.detections],
      [L.species, data.totals.species],
      [L.satellites, data.totals.satellites],
      [L.confirmed, data.totals.confirmed],
    ];
    const gap = 10;
    const boxW = (width - gap * (items.length - 1)) / items.length;
    const top = doc.y;
    items.forEach(([label, value], i) => {
      const x = left + i * (boxW + gap);
      doc.lineWidth(0.5).strokeColor(RULE).rect(x, top, boxW, 44).stroke();
      doc
        .font('bold')
        .fontSize(16)
        .fillColor(INK)
        .text(num.format(value), x + 8, top + 7, { width: boxW - 16, lineBreak: false });
      doc
        .font('body')
        .fontSize(9)
        .fillColor(MUTED)
        .text(label, x + 8, top + 28, { width: boxW - 16, lineBreak: false });
    });
    doc.x = left;
    doc.y = top + 44;
  }

  const fit = (text: string, w: number) => {
    if (doc.widthOfString(text) <= w) return text;
    let s = text;
    while (s.length > 1 && doc.widthOfString(`${s}…`) > w) s = s.slice(0, -1);
    return `${s}…`;
  };

  /** A table that breaks across pages, repeating its title and header on each new page. */
  const table = (title: string, columns: Column[], rows: string[][]) => {
    const rowH = 14;
    const pad = 3;
    const xs: number[] = [];
    let acc = left;
    for (const c of columns) {
      xs.push(acc);
      acc += c.width * width;
    }
    const cell = (text: string, i: number, y: number) => {
      const c = columns[i];
      const w = c.width * width - 2 * pad;
      doc.text(fit(text, w), xs[i] + pad, y + 3, { width: w, align: c.align ?? 'left', lineBreak: false });
    };
    const header = () => {
      const y = doc.y;
      doc.rect(left, y, width, rowH + 2).fill('#eeeeee');
      doc.font('bold').fillColor(INK);
      columns.forEach((c, i) => {
        // A long label (German, or a wide font) is set smaller rather than cut, down to 6 pt.
        const w = c.width * width - 2 * pad;
        doc.fontSize(8);
        doc.fontSize(Math.max(6, Math.min(8, (8 * w) / doc.widthOfString(c.header))));
        cell(c.header, i, y + 1);
      });
      doc.y = y + rowH + 2;
    };
    heading(title, 3 * rowH);
    header();
    if (rows.length === 0) {
      doc
        .font('body')
        .fontSize(9)
        .fillColor(MUTED)
        .text(L.none, left + pad, doc.y + 4, { width: width - 2 * pad });
      doc.x = left;
      return;
    }
    rows.forEach((row, r) => {
      if (doc.y + rowH > bottom()) {
        doc.addPage();
        doc.font('bold').fontSize(10).fillColor(MUTED).text(`${title} ${L.continued}`, left, doc.y, { width });
        doc.moveDown(0.3);
        header();
      }
      const y = doc.y;
      if (r % 2 === 1) doc.rect(left, y, width, rowH).fill('#f7f7f7');
      doc.font('body').fontSize(8).fillColor(INK);
      row.forEach((text, i) => cell(text, i, y));
      doc.y = y + rowH;
    });
    doc
      .lineWidth(0.5)
      .strokeColor(RULE)
      .moveTo(left, doc.y)
      .lineTo(left + width, doc.y)
      .stroke();
    doc.x = left;
  };

  /** A vertical bar chart with a value axis (0, half, max) and a few category labels. */
  const barChart = (title: string, values: number[], labels: string[], labelEvery: number) => {
    const chartH = 120;
    heading(title, chartH + 30);
    const axisW = 34;
    const x0 = left + axisW;
    const plotW = width - axisW;
    const top = doc.y + 6;
    const base = top + chartH;
    const max = niceMax(Math.max(0, ...values));
    doc.font('body').fontSize(7).fillColor(MUTED);
    for (const tick of Number.isInteger(max / 2) ? [0, max / 2, max] : [0, max]) {
      const y = base - (tick / max) * chartH;
      doc
        .lineWidth(0.3)
        .strokeColor(tick === 0 ? INK : RULE)
        .moveTo(x0, y)
        .lineTo(x0 + plotW, y)
        .stroke();
      doc.text(num.format(tick), left, y - 3, { width: axisW - 4, align: 'right', lineBreak: false });
    }
    doc.lineWidth(0.5).strokeColor(INK).moveTo(x0, top).lineTo(x0, base).stroke();
    const slot = plotW / Math.max(1, values.length);
    const barW = Math.max(0.5, slot * 0.8);
    values.forEach((v, i) => {
      if (v <= 0) return;
      const h = (v / max) * chartH;
      doc.rect(x0 + i * slot + (slot - barW) / 2, base - h, barW, h).fill(BAR);
    });
    doc.font('body').fontSize(7).fillColor(MUTED);
    labels.forEach((label, i) => {
      if (i % labelEvery !== 0 && i !== labels.length - 1) return;
      // The last label is drawn only if it does not run into the previous one.
      if (i === labels.length - 1 && i % labelEvery !== 0 && (i % labelEvery) * slot < doc.widthOfString(label) + 4) return;
      const lw = Math.max(slot, doc.widthOfString(label) + 4);
      const cx = x0 + i * slot + slot / 2;
      doc.text(label, Math.min(Math.max(cx - lw / 2, x0 - axisW / 2), x0 + plotW - lw), base + 3, {
        width: lw,
        align: 'center',
        lineBreak: false,
      });
    });
    doc.x = left;
    doc.y = base + 14;
  };

  // Top species.
  table(
    L.topSpecies,
    [
      { header: L.rank, width: 0.06, align: 'right' },
      { header: L.commonName, width: 0.4 },
      { header: L.scientificName, width: 0.38 },
      { header: L.detections, width: 0.16, align: 'right' },
    ],
    data.topSpecies.map((s, i) => [String(i + 1), s.commonName, s.scientificName, num.format(s.count)]),
  );

  // Trend and hourly activity.
  {
    const dayLabels = data.daily.map((d) => d.day);
    const maxLabels = 6;
    barChart(
      data.trendBucket === 'week' ? L.perWeek : L.perDay,
      data.daily.map((d) => d.count),
      dayLabels,
      Math.max(1, Math.ceil(dayLabels.length / maxLabels)),
    );
    barChart(
      L.hourly,
      data.hourly,
      data.hourly.map((_, h) => String(h).padStart(2, '0')),
      3,
    );
  }

  // Satellites.
  table(
    L.satellites,
    [
      { header: L.satellite, width: 0.6 },
      { header: L.detections, width: 0.2, align: 'right' },
      { header: L.species, width: 0.2, align: 'right' },
    ],
    data.satellites.map((s) => [s.name, num.format(s.detections), num.format(s.species)]),
  );

  // Every species.
  table(
    L.allSpecies,
    [
      { header: L.rank, width: 0.05, align: 'right' },
      { header: L.commonName, width: 0.22 },
      { header: L.scientificName, width: 0.22 },
      { header: L.count, width: 0.09, align: 'right' },
      { header: L.firstHeard, width: 0.165 },
      { header: L.lastHeard, width: 0.165 },
      { header: L.best, width: 0.09, align: 'right' },
    ],
    data.species.map((s, i) => [
      String(i + 1),
      s.commonName,
      s.scientificName,
      num.format(s.count),
      localDateTime(s.firstAt),
      localDateTime(s.lastAt),
      pct.format(s.bestConfidence),
    ]),
  );

  // Footers, now that the page count is known. The bottom margin is lifted while drawing so that
  // text below it does not start a new page.
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    const margin = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    const y = doc.page.height - margin + 18;
    doc
      .lineWidth(0.5)
      .strokeColor(RULE)
      .moveTo(left, y - 6)
      .lineTo(left + width, y - 6)
      .stroke();
    doc.font('body').fontSize(8).fillColor(MUTED);
    doc.text(fit(`${data.title} · ${data.teamName}`, width * 0.6), left, y, { width: width * 0.6, lineBreak: false });
    const page = L.page.replace('{n}', String(i - range.start + 1)).replace('{m}', String(range.count));
    doc.text(page, left + width * 0.6, y, { width: width * 0.4, align: 'right', lineBreak: false });
    doc.page.margins.bottom = margin;
  }
  doc.end();
  return doc;
}

/** The smallest 1, 2 or 5 × 10^k at or above the largest value (1 for an empty chart). */
function niceMax(v: number): number {
  if (v <= 1) return 1;
  const mag = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * mag >= v) return m * mag;
  return 10 * mag;
}
