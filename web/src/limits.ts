/**
 * The limits the dashboard's inputs carry (issue 23: "inputs carry the same limits as the API").
 * One map for every form, so a field cannot say 200 where the hub refuses at 100;
 * test/web-limits.test.ts checks each entry against the hub's OpenAPI document (or the service
 * constant where the hub checks after trimming), so the two cannot drift apart.
 */
export const LIMITS = {
  personName: { maxLength: 120 },
  email: { maxLength: 254 },
  password: { maxLength: 256 },
  teamName: { maxLength: 100 },
  teamDescription: { maxLength: 2000 },
  joinMessage: { maxLength: 500 },
  apiKeyName: { maxLength: 100 },
  satelliteName: { maxLength: 100 },
  passkeyName: { maxLength: 100 },
  /** Checked by the service on the trimmed text (MAX_COMMENT); the schema only bounds the raw body. */
  comment: { maxLength: 2000 },
  annotationNotes: { maxLength: 10_000 },
  fieldNote: { maxLength: 5000 },
  alertRuleName: { maxLength: 100 },
  alertChannelName: { maxLength: 100 },
  scheduledExportName: { maxLength: 100 },
  modelName: { maxLength: 200 },
  modelVersion: { maxLength: 50 },
  modelUrl: { maxLength: 2000 },
  modelAttribution: { maxLength: 300 },
  /** Entered as a percentage; the API reads 0–1 (minConfidence of GET /detections and the exports). */
  confidencePercent: { min: 0, max: 100 },
  cooldownMinutes: { min: 0, max: 10_080 },
} as const;
