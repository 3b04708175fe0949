/**
 * What every export reads (issue 18): the rows the Detections page lists (promoted, one per
 * stitched call, in categories the team shows), oldest first, in batches, and what the files
 * need to know about the team.
 */

export type VerificationStatus = 'unverified' | 'pending_review' | 'confirmed' | 'rejected';

export interface ExportRow {
  id: string;
  tenantId: string;
  /** ISO 8601 UTC: when the call starts. */
  detectedAt: string;
  /** ISO 8601 UTC: when the call ends (its last chunk's window). */
  endAt: string;
  speciesCode: string;
  commonName: string;
  scientificName: string;
  category: string;
  confidence: number;
  calibratedConfidence: number;
  satelliteId: string;
  satelliteName: string;
  latitude: number | null;
  longitude: number | null;
  verificationStatus: VerificationStatus;
  /** The chunk holding the call's first window (GET /audio/:chunkId). */
  chunkId: string;
  /** Chunks the stitched call spans (1 for a single window). */
  callChunks: number;
  modelId: string;
  isRare: boolean;
}

export interface ExportContext {
  teamName: string;
  /** IANA zone of the team (team setting time_zone): local dates and times in the files. */
  timeZone: string;
  generatedAt: Date;
  /** Absolute dashboard URL of a detection. */
  detectionUrl(id: string): string;
  /** Absolute API URL of a chunk's audio. */
  audioUrl(chunkId: string): string;
  /** Who the recordings are credited to (xeno-canto recordist, DwC recordedBy/rightsHolder). */
  recordist: string;
  /** Licence of the recordings (xeno-canto, DwC multimedia), e.g. "CC BY-NC-SA 4.0". */
  license: string;
}

/** The rows, batch by batch, oldest first. */
export type RowSource = AsyncIterable<ExportRow[]>;
