/**
 * What every export reads (issue 18): the rows the Detections page lists (promoted, one per
 * stitched call, in categories the team shows), oldest first, in batches, and what the files
 * need to know about the team.
 */
import type { DetectionExportRow } from '../detections/service.ts';
import type { PublicationLicense } from './licenses.ts';

export type VerificationStatus = DetectionExportRow['verificationStatus'];

/**
 * One row of an export: the detections repository's export row (DetectionExportRow, the one
 * definition of its columns: the call's start `detectedAt` and end `endAt`, the satellite's name
 * and position) and the confidence as calibrated for the team and model.
 */
export type ExportRow = DetectionExportRow & {
  /** The (team, model) curve's reading, else the raw confidence. */
  calibratedConfidence: number;
};

export interface ExportContext {
  teamName: string;
  /** IANA zone of the team (team setting time_zone): local dates and times in the files. */
  timeZone: string;
  generatedAt: Date;
  /** Absolute dashboard URL of a detection. */
  detectionUrl(id: string): string;
  /** Absolute API URL of a chunk's audio; empty for a withheld chunk (''). */
  audioUrl(chunkId: string): string;
  /** Who the recordings are credited to (xeno-canto recordist, DwC recordedBy/rightsHolder). */
  recordist: string;
  /** Short name of the team's licence (team setting publication_license), e.g. "CC BY 4.0": xeno-canto's licence field. */
  license: string;
  /** The same licence in full: its URL (Darwin Core's license columns and eml.xml) and whether GBIF takes it. */
  licenseInfo: PublicationLicense;
}

/** The rows, batch by batch, oldest first. */
export type RowSource = AsyncIterable<ExportRow[]>;

/** Who a file is for: the team's own, or one that leaves the team (a scheduled send, a submission format), where sensitive species are generalised. */
export type Audience = 'team' | 'outside';
