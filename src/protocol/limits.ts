/**
 * How large a satellite's MQTT packets may be (issue 33 item 5). The broker refuses anything
 * larger by closing the connection before it buffers the packet: the embedded broker by reading
 * each packet's fixed header (src/infra/broker/packet-guard.ts), Mosquitto by `max_packet_size`
 * (deploy/mosquitto/mosquitto.conf). The cap follows from the largest message the protocol allows,
 * an audio chunk (§2, §8), so nothing a satellite may legally send is refused.
 */
import { CHUNK_MAX_MS } from './messages.ts';
import { BYTES_PER_MS, DURATION_TOLERANCE } from './wav.ts';

/** The chunk list a WAV writer may put before `data` (LIST, fact, JUNK): generous for any encoder. */
const WAV_HEADERS_MAX_BYTES = 4096;
/** The JSON around the audio: ids, times, position, each key. A few hundred bytes, doubled for safety. */
const AUDIO_FIELDS_MAX_BYTES = 1024;
/** Fixed header (≤ 5), topic `chorus/{uuid}/{uuid}/audio` with its length (≤ 90), packet id. */
const MQTT_OVERHEAD_MAX_BYTES = 128;

/** The WAV the ingester still takes: CHUNK_MAX_MS of 48 kHz 16-bit mono, plus the duration tolerance, plus headers. */
export const AUDIO_WAV_MAX_BYTES = Math.ceil(CHUNK_MAX_MS * BYTES_PER_MS * (1 + DURATION_TOLERANCE)) + WAV_HEADERS_MAX_BYTES;

/** The whole MQTT packet of the largest legal audio chunk (about 437 KB; live-audio chunks are smaller). */
export const AUDIO_PACKET_MAX_BYTES = 4 * Math.ceil(AUDIO_WAV_MAX_BYTES / 3) + AUDIO_FIELDS_MAX_BYTES + MQTT_OVERHEAD_MAX_BYTES;

/**
 * The default cap on a logged-in satellite's packets (MQTT_MAX_PACKET_BYTES): the largest audio
 * packet plus a fifth, rounded up to 512 KiB. MQTT_MAX_PACKET_BYTES may not go below AUDIO_PACKET_MAX_BYTES.
 */
export const MQTT_MAX_PACKET_BYTES = 512 * 1024;

/**
 * The cap before the login succeeded: a CONNECT carries a client id (≤ 128 bytes on the embedded
 * broker), a 36-byte username, a 64-byte password and at most a small will.
 */
export const MQTT_MAX_CONNECT_BYTES = 4096;

/**
 * What a satellite's log-response may take (the journal's last lines as text and as an array):
 * half the packet cap, so the answer to a large `tail` is trimmed to its newest lines, not refused.
 */
export const LOG_RESPONSE_MAX_BYTES = MQTT_MAX_PACKET_BYTES / 2;
