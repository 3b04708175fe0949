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
  | { type: 'chat_bot'; botToken: string; chatId: string };
