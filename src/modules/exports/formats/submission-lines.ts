/**
 * Darwin Core's occurrence.txt and iNaturalist's CSV lines as the database writes them
 * (./lines-sql.ts), byte for byte what ./dwca.ts and ./inaturalist.ts write from rows (a test
 * holds the two to each other): the writers built in JavaScript still serve a file that publishes
 * its recordings, whose links the hub signs (src/modules/published-audio). A row these formats
 * leave out (rejected, or no organism: isOrganism) is NULL, which writes nothing.
 */
import type { ExportLineSql } from '../../detections/service.ts';
import { coordSql, CRLF, csvText, joinSql, lineSql, neutraliseSql, startsLikeFormula, type LinesOptions } from './lines-sql.ts';
import { clean, GENERALISED, OCCURRENCE_FIELDS, WITHHELD_INFO } from './dwca.ts';
import { latin1Text, SENSITIVE_DESCRIPTION, type Geoprivacy } from './inaturalist.ts';
import { neutralise } from './shared.ts';

/** isOrganism and not rejected: what an observation format carries. */
const SUBMITTED = `d.verification_status <> 'rejected' AND d.category NOT IN ('anthropogenic', 'human_voice') AND d.scientific_name ~ '^[A-Z][a-z-]+ [a-z-]+'`;

/** Whether `x` holds a tab or a line break (three strpos: a third faster here than a regular expression). */
const hasBreak = (x: string) => `strpos(${x}, chr(9)) + strpos(${x}, chr(10)) + strpos(${x}, chr(13)) > 0`;

/** dwca's `clean` of `x`: a tab or line break would split the record. */
const cleanSql = (x: string) => `CASE WHEN ${hasBreak(x)} THEN regexp_replace(${x}, '[\\t\\r\\n]+', ' ', 'g') ELSE ${x} END`;

/**
 * clean(neutralise(x)), `x` tested once: the apostrophe neutralise may add is no tab or line
 * break, so whether anything needs cleaning is x's question.
 */
const cleanText = (x: string) =>
  `CASE WHEN ${hasBreak(x)} THEN regexp_replace(${neutraliseSql(x)}, '[\\t\\r\\n]+', ' ', 'g') ELSE ${neutraliseSql(x)} END`;

export interface SubmissionOptions extends LinesOptions {
  /** Who the recordings are credited to (recordedBy, rightsHolder). */
  recordist: string;
  /** Darwin Core's license cell: the licence's URL, else its name (dwca licenseText). */
  license: string;
}

/**
 * An occurrence.txt record (OCCURRENCE_FIELDS), no recording linked (associatedMedia empty);
 * written day by day (the hub deflates the whole file: exportLinesStatement). Its place (the four
 * cells from decimalLatitude to locality) depends on the satellite alone, so it is computed once a
 * satellite: `sp.place`, and `sp.coarse_place` for a generalised row's grid cell.
 */
export const dwcOccurrenceLineSql =
  (o: SubmissionOptions): ExportLineSql =>
  (add) => {
    const satelliteCells: Record<string, string> = {};
    const line = lineSql(
      o,
      add,
      (c) => {
        const constant = (v: string) => c.text(clean(v));
        const coarsened = (v: string) => (c.generalised ? constant(v) : "''");
        const event = (t: string) => c.sessionStampOffset(t, 'T');
        const place = c.generalised ? 'coarse_place' : 'place';
        satelliteCells[place] = joinSql(
          'chr(9)',
          [
            coordSql(c.latitude),
            coordSql(c.longitude),
            `CASE WHEN ${c.latitude} IS NOT NULL AND ${c.longitude} IS NOT NULL THEN 'WGS84' ELSE '' END`,
            cleanText(c.satelliteName),
          ],
          "''",
        );
        // The place's four cells are one (`sp.place`): the three after the first write nothing of their own.
        const cells: Record<(typeof OCCURRENCE_FIELDS)[number][0], string | null> = {
          occurrenceID: 'd.id::text',
          basisOfRecord: "'MachineObservation'",
          eventDate: `CASE WHEN ${c.callHasLength} THEN ${event(c.atTime)} || '/' || ${event(c.endTime)} ELSE ${event(c.atTime)} END`,
          scientificName: cleanText('d.scientific_name'),
          vernacularName: cleanText('d.common_name'),
          taxonRank: "'species'",
          kingdom: "'Animalia'",
          decimalLatitude: `sp.${place}`,
          decimalLongitude: null,
          geodeticDatum: null,
          locality: null,
          occurrenceStatus: "'present'",
          recordedBy: constant(neutralise(o.recordist)),
          // The template around a value holds no tab or line break: cleaning the value cleans the cell.
          identifiedBy: `'Chorus ' || ${cleanSql('d.model_id')}`,
          identificationVerificationStatus: `CASE WHEN d.verification_status = 'confirmed' THEN 'verified' ELSE 'unverified' END`,
          identificationRemarks: `${c.confidencePair} || ', model ' || ${cleanSql('d.model_id')}`,
          associatedMedia: "''",
          dataGeneralizations: coarsened(GENERALISED),
          informationWithheld: coarsened(WITHHELD_INFO),
          references: clean(o.detectionUrlPrefix) === o.detectionUrlPrefix ? c.detectionUrl : cleanSql(c.detectionUrl),
          license: constant(o.license),
          rightsHolder: constant(neutralise(o.recordist)),
        };
        return joinSql(
          'chr(9)',
          OCCURRENCE_FIELDS.flatMap(([name]) => cells[name] ?? []),
          'chr(10)',
        );
      },
      SUBMITTED,
    );
    return { ...line, dayByDay: true, satelliteCells };
  };

export interface InaturalistLineOptions extends LinesOptions {
  geoprivacy: Geoprivacy;
  /**
   * latin1Text of the values a line may hold that are not plain ASCII (the team's species names
   * and satellite names): the database cannot transliterate. A value missing here that is not
   * Latin-1 has its other characters written as `?`.
   */
  latin1: ReadonlyMap<string, string>;
}

/** An iNaturalist CSV record (INATURALIST_COLUMNS), its text Latin-1-safe (latin1Text), CRLF-terminated; no recording linked. */
export const inaturalistLineSql =
  (o: InaturalistLineOptions): ExportLineSql =>
  (add) => {
    const names = [...o.latin1].filter(([from, to]) => from !== to);
    const map = names.length ? `${add(JSON.stringify(Object.fromEntries(names)))}::jsonb` : null;
    // eslint-disable-next-line no-control-regex
    const ascii = /^[\x00-\x7f]*$/;
    const latin1 = (x: string) =>
      `CASE WHEN octet_length(${x}) = char_length(${x}) THEN ${x} ELSE ${map ? `coalesce(${map} ->> ${x}, ` : ''}regexp_replace(regexp_replace(${x}, '[\\x80-\\x9f]', '', 'g'), '[^\\x01-\\xff]', '?', 'g')${map ? ')' : ''} END`;
    return lineSql(
      o,
      add,
      (c) => {
        const common = latin1('d.common_name');
        const model = latin1('d.model_id');
        const prefix = ascii.test(o.detectionUrlPrefix) ? o.detectionUrlPrefix : latin1Text(o.detectionUrlPrefix);
        // Always quoted (it holds commas): the guard looks at its first character, the common name's. Its quotes
        // doubled where they can be (the names; the hub's own text holds none).
        const quoted = (x: string) => `replace(${x}, '"', '""')`;
        const description =
          `${quoted(common)} || ', detected acoustically by Chorus: ' || ${c.confidencePair} || ', model ' || ${quoted(model)} || '. ' || ` +
          (c.generalised ? c.text(SENSITIVE_DESCRIPTION) : `'Detection: ' || ${c.text(prefix.replace(/"/g, '""'))} || d.id`);
        // iNaturalist obscures a sensitive species' place further unless the team asked for private.
        const geoprivacy = c.generalised && o.geoprivacy === 'open' ? "'obscured'" : `'${o.geoprivacy}'`;
        const line = [
          csvText(latin1('d.scientific_name')),
          c.sessionStampOffset(c.atTime, ' '),
          `'"' || CASE WHEN ${startsLikeFormula(common)} THEN '''' ELSE '' END || ${description} || '"'`,
          csvText(latin1(c.satelliteName)),
          coordSql(c.latitude),
          coordSql(c.longitude),
          `'"Chorus,acoustic"'`,
          geoprivacy,
        ];
        return joinSql("','", line, CRLF);
      },
      SUBMITTED,
    );
  };
