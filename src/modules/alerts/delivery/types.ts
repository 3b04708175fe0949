import type { AlertEvent, ChannelType } from '../schemas.ts';

export type { AlertEvent, ChannelType };

/** What a delivery says; built by the alerts engine. */
export interface AlertPayload {
  event: AlertEvent;
  /** ISO 8601 */
  timestamp: string;
  /**
   * The team's language and zone when the alert fired: chat cards and e-mails write their labels
   * and times in them (absent in payloads stored before issue 36: English, UTC).
   */
  language?: string;
  timeZone?: string;
  ruleName: string;
  teamName: string;
  /** One line of human text, e.g. "Rare species: Eurasian Wren (0.91) at Garden". */
  message: string;
  /** Scientific name. */
  species: string | null;
  commonName: string | null;
  confidence: number | null;
  satelliteName: string | null;
  detectionId: string | null;
  /** Absolute dashboard URL, or null. */
  link: string | null;
}

/** A channel's configuration with its secrets opened (never leaves the process). */
export type ChannelTarget =
  | { type: 'email'; addresses: string[] }
  | { type: 'webhook'; url: string; secret: string | null; payloadTemplate: string | null }
  | { type: 'chat_blocks' | 'chat_cards' | 'chat_embeds'; webhookUrl: string }
  | { type: 'chat_bot'; botToken: string; chatId: string }
  | {
      type: 'mqtt_home_assistant';
      brokerUrl: string;
      username: string | null;
      password: string | null;
      topicPrefix: string;
      discoveryPrefix: string;
    }
  | { type: 'birdweather'; apiUrl: string; stationToken: string };

/**
 * What a stream channel (Home Assistant, BirdWeather: issue 38) sends for one detection; stored
 * as the delivery's payload, so a retry sends the same. Built by streams.ts.
 */
export interface StreamPayload {
  stream: 'detection';
  /** A channel test's made-up detection: no audio is read, nothing is kept per satellite. */
  sample?: boolean;
  detectionId: string;
  satelliteId: string;
  satelliteName: string;
  speciesCode: string;
  scientificName: string;
  commonName: string;
  confidence: number;
  /** ISO 8601; the hour's start for a sensitive species (as alert deliveries). */
  detectedAt: string;
  /** The satellite's detections since the start of the team's day, this one included. */
  countToday: number;
  sensitive: boolean;
  chunkId: string | null;
  /** When the chunk (the soundscape) starts, ISO 8601. */
  chunkStartedAt: string | null;
  chunkDurationMs: number | null;
  /** The call within the chunk, in milliseconds from its start. */
  startMs: number;
  endMs: number;
  /** The chunk's own position, else the satellite's latest GPS fix, else its profile; null when none is known. */
  latitude: number | null;
  longitude: number | null;
}
