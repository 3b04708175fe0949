/**
 * The satellite's own journal, and answering the hub's log requests from it:
 * log-request {requestId, tail} → log-response {requestId, satelliteId, tenantId, text, lines},
 * the last `tail` lines as newline-separated text and as an array.
 */
import type { BrokerConnection } from './connection.ts';
import type { LogLevel, SatelliteContext } from './types.ts';
import { LOG_RESPONSE_MAX_BYTES } from '../protocol/limits.ts';

/** The satellite's own journal: the last `capacity` lines, each also handed to `sink`. */
export class Journal {
  private readonly lines: string[] = [];

  constructor(
    private readonly now: () => Date,
    private readonly sink: ((line: string) => void) | null = null,
    private readonly capacity = 2000,
  ) {}

  write(level: LogLevel, message: string): void {
    const line = `${this.now().toISOString()} ${level.padEnd(5)} ${message}`;
    this.lines.push(line);
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
    this.sink?.(line);
  }

  tail(n: number): string[] {
    return n <= 0 ? [] : this.lines.slice(-n);
  }
}

/** Answers a log-request with the journal's last lines, the request's own log line included. */
export async function answerLogRequest(
  ctx: Pick<SatelliteContext, 'id' | 'tenantId' | 'log' | 'emit'>,
  journal: Journal,
  connection: Pick<BrokerConnection, 'publish'>,
  body: Record<string, unknown>,
): Promise<void> {
  const requestId = typeof body.requestId === 'string' ? body.requestId : null;
  const tail = Number.isInteger(body.tail) && (body.tail as number) > 0 ? Math.min(body.tail as number, 10_000) : 100;
  ctx.log('info', `log request ${requestId ?? '(no id)'}: sending the last ${tail} lines`);
  ctx.emit('log-request', body);
  await connection.publish('log-response', logResponse({ requestId, satelliteId: ctx.id, tenantId: ctx.tenantId }, journal.tail(tail)), 1);
}

/**
 * The log-response body, its oldest lines dropped until it fits LOG_RESPONSE_MAX_BYTES: the
 * broker closes a satellite that sends more than its packet cap (issue 33), and the newest lines
 * are the ones asked about.
 */
export function logResponse(ids: { requestId: string | null; satelliteId: string; tenantId: string }, all: string[]) {
  let lines = all;
  for (;;) {
    const body = { ...ids, text: lines.join('\n'), lines };
    if (lines.length === 0 || Buffer.byteLength(JSON.stringify(body)) <= LOG_RESPONSE_MAX_BYTES) return body;
    lines = lines.slice(Math.ceil(lines.length / 10));
  }
}
