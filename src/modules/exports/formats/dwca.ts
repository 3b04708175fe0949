/**
 * A Darwin Core Archive for GBIF (FORMATS.md): meta.xml, eml.xml, occurrence.txt (one
 * MachineObservation per detection) and multimedia.txt (Simple Multimedia: the recording).
 *
 * DwC text files are tab-separated and cannot quote, so tabs and line breaks inside values
 * become spaces. One pass over the rows fills both data files: occurrence.txt streams into the
 * zip as it is written, multimedia.txt follows from a temp file. individualCount is left out: one call says nothing about how
 * many birds called. Rejected detections and sounds that are no species are left out.
 *
 * The licence is the team's (setting publication_license, exports/licenses.ts): its URL in the
 * `license` columns and in eml.xml's intellectualRights link, where GBIF reads it (issue 34).
 * eml.xml follows GBIF's metadata profile 1.3 (EML 2.2.0), checked against its schema in
 * test/export-gbif.test.ts.
 */
import type { Readable } from 'node:stream';
import type { ExportContext, ExportRow, RowSource } from '../types.ts';
import { conf, coord, isGeneralised, isOrganism, localStampOffset, neutralise, PIECE_CHARS, type SkipTally } from './shared.ts';
import { zipStream } from './zip.ts';

const DWC = 'http://rs.tdwg.org/dwc/terms/';
const DC = 'http://purl.org/dc/terms/';

export const OCCURRENCE_ROW_TYPE = `${DWC}Occurrence`;
export const MULTIMEDIA_ROW_TYPE = 'http://rs.gbif.org/terms/1.0/Multimedia';

type Value = (r: ExportRow, ctx: ExportContext) => string;

/**
 * A value people type (a satellite's name, the team's, a species' name): neutralised like the CSV
 * writers' cells, since spreadsheets open tab-separated files too (issue 33). Coordinates and
 * dates are ours and stay as they are, so -33.9 remains a number.
 */
const text =
  (value: Value): Value =>
  (r, ctx) =>
    neutralise(value(r, ctx));

const eventDate = (iso: string, ctx: ExportContext) => localStampOffset(iso, ctx.timeZone, 'T');

/**
 * Whether people checked the machine's identification: `verified` once the team's review
 * confirmed it, else `unverified` (not reviewed, or votes pending). Rejected rows never get here.
 */
const verification = (r: ExportRow) => (r.verificationStatus === 'confirmed' ? 'verified' : 'unverified');

/** A licence as GBIF reads it: its URL; "all rights reserved" has none and is written as its name. */
export const licenseText = (ctx: Pick<ExportContext, 'licenseInfo'>) => ctx.licenseInfo.url ?? ctx.licenseInfo.name;

/** What GBIF users read about a sensitive species' occurrence (DwC dataGeneralizations, informationWithheld). */
export const GENERALISED = 'Sensitive species: coordinates rounded to 0.1 degree, time to the hour';
export const WITHHELD_INFO = 'Recorder name, exact time and recording withheld';

/** occurrence.txt: column name, term URI and value, in file order (meta.xml is built from this). */
export const OCCURRENCE_FIELDS: readonly [string, string, Value][] = [
  ['occurrenceID', `${DWC}occurrenceID`, (r) => r.id],
  ['basisOfRecord', `${DWC}basisOfRecord`, () => 'MachineObservation'],
  // The call's start and end as an ISO 8601 interval, as DwC allows (issue 34: every format has its
  // end time); a sensitive species' interval is the hour it was heard in.
  [
    'eventDate',
    `${DWC}eventDate`,
    (r, ctx) =>
      r.endAt && r.endAt !== r.detectedAt ? `${eventDate(r.detectedAt, ctx)}/${eventDate(r.endAt, ctx)}` : eventDate(r.detectedAt, ctx),
  ],
  ['scientificName', `${DWC}scientificName`, text((r) => r.scientificName)],
  ['vernacularName', `${DWC}vernacularName`, text((r) => r.commonName)],
  ['taxonRank', `${DWC}taxonRank`, () => 'species'],
  ['kingdom', `${DWC}kingdom`, () => 'Animalia'],
  ['decimalLatitude', `${DWC}decimalLatitude`, (r) => coord(r.latitude).text],
  ['decimalLongitude', `${DWC}decimalLongitude`, (r) => coord(r.longitude).text],
  ['geodeticDatum', `${DWC}geodeticDatum`, (r) => (r.latitude != null && r.longitude != null ? 'WGS84' : '')],
  ['locality', `${DWC}locality`, text((r) => r.satelliteName)],
  ['occurrenceStatus', `${DWC}occurrenceStatus`, () => 'present'],
  ['recordedBy', `${DWC}recordedBy`, text((_r, ctx) => ctx.recordist)],
  ['identifiedBy', `${DWC}identifiedBy`, text((r) => `Chorus ${r.modelId}`)],
  ['identificationVerificationStatus', `${DWC}identificationVerificationStatus`, (r) => verification(r)],
  [
    'identificationRemarks',
    `${DWC}identificationRemarks`,
    (r) => `confidence ${conf(r.confidence)} (calibrated ${conf(r.calibratedConfidence)}), model ${r.modelId}`,
  ],
  ['associatedMedia', `${DWC}associatedMedia`, (r, ctx) => ctx.audioUrl(r.chunkId)],
  ['dataGeneralizations', `${DWC}dataGeneralizations`, (r) => (isGeneralised(r) ? GENERALISED : '')],
  ['informationWithheld', `${DWC}informationWithheld`, (r) => (isGeneralised(r) ? WITHHELD_INFO : '')],
  ['references', `${DC}references`, (r, ctx) => ctx.detectionUrl(r.id)],
  ['license', `${DC}license`, (_r, ctx) => licenseText(ctx)],
  ['rightsHolder', `${DC}rightsHolder`, text((_r, ctx) => ctx.recordist)],
];

/** multimedia.txt after its coreid column (the occurrenceID). */
export const MULTIMEDIA_FIELDS: readonly [string, string, Value][] = [
  ['type', `${DC}type`, () => 'Sound'],
  ['format', `${DC}format`, () => 'audio/wav'],
  ['identifier', `${DC}identifier`, (r, ctx) => ctx.audioUrl(r.chunkId)],
  ['references', `${DC}references`, (r, ctx) => ctx.detectionUrl(r.id)],
  ['title', `${DC}title`, text((r) => `${r.commonName} (${r.scientificName}), Chorus satellite ${r.satelliteName}`)],
  ['created', `${DC}created`, (r, ctx) => eventDate(r.detectedAt, ctx)],
  ['creator', `${DC}creator`, text((_r, ctx) => ctx.recordist)],
  ['license', `${DC}license`, (_r, ctx) => licenseText(ctx)],
  ['rightsHolder', `${DC}rightsHolder`, text((_r, ctx) => ctx.recordist)],
];

/** DwC text cannot quote: a tab or line break would split the record. */
const BREAKS = /[\t\r\n]/;
export const clean = (v: string) => (BREAKS.test(v) ? v.replace(/[\t\r\n]+/g, ' ') : v);
export const line = (cells: string[]) => cells.map(clean).join('\t') + '\n';

/** One record of `fields` for a row, built as one string (a million rows make no cell arrays). */
function record(fields: readonly [string, string, Value][], r: ExportRow, ctx: ExportContext, first?: string): string {
  let out = first === undefined ? '' : clean(first);
  for (let i = 0; i < fields.length; i++) {
    if (i > 0 || first !== undefined) out += '\t';
    out += clean(fields[i]![2](r, ctx));
  }
  return out + '\n';
}

const xml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] as string);

function fieldsXml(fields: readonly [string, string, Value][], first: number): string {
  return fields.map(([, term], i) => `    <field index="${i + first}" term="${term}"/>`).join('\n');
}

export function metaXml(): string {
  const attrs = 'encoding="UTF-8" fieldsTerminatedBy="\\t" linesTerminatedBy="\\n" fieldsEnclosedBy="" ignoreHeaderLines="1"';
  return `<?xml version="1.0" encoding="UTF-8"?>
<archive xmlns="http://rs.tdwg.org/dwc/text/" metadata="eml.xml">
  <core ${attrs} rowType="${OCCURRENCE_ROW_TYPE}">
    <files><location>occurrence.txt</location></files>
    <id index="0"/>
${fieldsXml(OCCURRENCE_FIELDS, 0)}
  </core>
  <extension ${attrs} rowType="${MULTIMEDIA_ROW_TYPE}">
    <files><location>multimedia.txt</location></files>
    <coreid index="0"/>
${fieldsXml(MULTIMEDIA_FIELDS, 1)}
  </extension>
</archive>
`;
}

/** The GBIF metadata profile eml.xml follows (test/fixtures/gbif-eml holds its schema). */
export const EML_NAMESPACE = 'https://eml.ecoinformatics.org/eml-2.2.0';
export const EML_PROFILE_SCHEMA = 'https://rs.gbif.org/schema/eml-gbif-profile/1.3/eml.xsd';

/**
 * The dataset description, in the profile's element order: title, creator and metadataProvider
 * (the team; profile 1.1 requires both before pubDate), pubDate, language, abstract, the
 * licence twice (intellectualRights with the link GBIF reads, and 1.3's `licensed`), contact.
 */
export function emlXml(ctx: ExportContext): string {
  // agentType wants a non-empty organizationName.
  const team = xml(ctx.teamName.trim() || 'Chorus');
  const agent = `<organizationName>${team}</organizationName>`;
  const day = ctx.generatedAt.toISOString().slice(0, 10);
  const l = ctx.licenseInfo;
  const holder = xml(ctx.recordist.trim() || ctx.teamName.trim() || 'Chorus');
  const rights = l.url
    ? `This work is licensed under a <ulink url="${xml(l.url)}"><citetitle>${xml(l.title)}</citetitle></ulink>. Rights holder: ${holder}.`
    : `${xml(l.name)}. Rights holder: ${holder}.`;
  const licensed = l.url
    ? `<licensed><licenseName>${xml(l.title)}</licenseName><url>${xml(l.url)}</url><identifier>${xml(l.id)}</identifier></licensed>`
    : `<licensed><licenseName>${xml(l.name)}</licenseName></licensed>`;
  return `<?xml version="1.0" encoding="UTF-8"?>
<eml:eml xmlns:eml="${EML_NAMESPACE}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="${EML_NAMESPACE} ${EML_PROFILE_SCHEMA}"
  packageId="chorus-export-${ctx.generatedAt.getTime()}" system="chorus" scope="system" xml:lang="en">
  <dataset>
    <title>${team}: acoustic bird detections (Chorus)</title>
    <creator>${agent}</creator>
    <metadataProvider>${agent}</metadataProvider>
    <pubDate>${day}</pubDate>
    <language>en</language>
    <abstract><para>Species detected in sound recorded by the automated recorders of ${team}, identified by machine-learning models in the Chorus hub. Each occurrence is one call; identificationVerificationStatus says whether the team's review confirmed it, identificationRemarks gives the model and its confidence, multimedia the recording. Generated ${xml(ctx.generatedAt.toISOString())}.</para></abstract>
    <intellectualRights><para>${rights}</para></intellectualRights>
    ${licensed}
    <contact>${agent}</contact>
  </dataset>
</eml:eml>
`;
}

/**
 * The archive as a zip stream: occurrence.txt streams as its entry while the rows come (deflated
 * on the fly); multimedia.txt, filled in the same pass, waits in a temp file and follows it.
 * Rows left out are counted in `opts.skipped` when given.
 */
export function darwinCoreArchive(rows: RowSource, ctx: ExportContext, opts: { skipped?: SkipTally } = {}): Readable {
  return zipStream(async (job) => {
    job.zip.addBuffer(Buffer.from(metaXml()), 'meta.xml');
    job.zip.addBuffer(Buffer.from(emlXml(ctx)), 'eml.xml');
    const occurrence = job.entry('occurrence.txt');
    const multimedia = job.temp('multimedia.txt');
    await occurrence.write(Buffer.from(line(OCCURRENCE_FIELDS.map(([name]) => name))));
    await multimedia.write(line(['coreid', ...MULTIMEDIA_FIELDS.map(([name]) => name)]));
    for await (const batch of rows) {
      job.check();
      let occ = '';
      let media = '';
      for (const r of batch) {
        if (r.verificationStatus === 'rejected' || !isOrganism(r)) {
          opts.skipped?.add(r, r.verificationStatus === 'rejected' ? 'rejected' : 'not_a_species');
          continue;
        }
        occ += record(OCCURRENCE_FIELDS, r, ctx);
        if (occ.length >= PIECE_CHARS) {
          await occurrence.write(Buffer.from(occ));
          occ = '';
        }
        // A sensitive species' recording is withheld (its chunk would place it), and an unpublished one has no
        // link an importer could fetch (issue 34): no media line.
        if (!isGeneralised(r) && ctx.audioUrl(r.chunkId)) media += record(MULTIMEDIA_FIELDS, r, ctx, r.id);
      }
      if (occ) await occurrence.write(Buffer.from(occ));
      if (media) await multimedia.write(media);
    }
    occurrence.close();
    await multimedia.close();
    job.zip.addFile(multimedia.file, 'multimedia.txt');
  });
}

/**
 * The archive around occurrence records the database wrote (submission-lines.ts), streamed into
 * occurrence.txt as they come. Such a file links no recording (published links are signed by the
 * hub: darwinCoreArchive writes those), so multimedia.txt holds its header alone, as
 * darwinCoreArchive's does for a file without links.
 */
export function darwinCoreArchiveOfLines(lines: AsyncIterable<Buffer>, ctx: ExportContext): Readable {
  return zipStream(async (job) => {
    job.zip.addBuffer(Buffer.from(metaXml()), 'meta.xml');
    job.zip.addBuffer(Buffer.from(emlXml(ctx)), 'eml.xml');
    const occurrence = job.entry('occurrence.txt');
    await occurrence.write(Buffer.from(line(OCCURRENCE_FIELDS.map(([name]) => name))));
    for await (const piece of lines) await occurrence.write(piece);
    occurrence.close();
    job.zip.addBuffer(Buffer.from(line(['coreid', ...MULTIMEDIA_FIELDS.map(([name]) => name)])), 'multimedia.txt');
  });
}
