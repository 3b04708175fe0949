/** The hub's log (src/core/log.ts) as tests read it: one JSON object per line on stdout. */
export interface LogLine {
  level: number;
  time: string;
  msg: string;
  [field: string]: unknown;
}

/** Every complete line of `text` parsed; throws naming the first line that is not a log line. */
export function logLines(text: string): LogLine[] {
  const lines = text.split('\n');
  lines.pop(); // the part after the last newline is not a whole line yet
  return lines
    .filter((l) => l.trim() !== '')
    .map((l) => {
      let v: unknown;
      try {
        v = JSON.parse(l);
      } catch {
        throw new Error(`not a JSON log line: ${l}`);
      }
      const o = v as LogLine;
      if (typeof o !== 'object' || o === null || typeof o.level !== 'number' || typeof o.time !== 'string' || typeof o.msg !== 'string')
        throw new Error(`a log line without level, time and msg: ${l}`);
      return o;
    });
}

/** The msg of every log line, one per line (what tests match the start-up sentences against). */
export function logText(text: string): string {
  return text
    .split('\n')
    .map((l) => {
      try {
        const o = JSON.parse(l) as { msg?: unknown };
        return typeof o.msg === 'string' ? o.msg : l;
      } catch {
        return l;
      }
    })
    .join('\n');
}
