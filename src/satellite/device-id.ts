/** The satellite's device id, which the hub uses to recognise a device that registers again. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** A stable device id for re-registration (kept in the data dir). */
export function deviceIdOf(dataDir: string): string {
  const file = path.join(dataDir, 'device-id');
  try {
    const id = fs.readFileSync(file, 'utf8').trim();
    if (id) return id;
  } catch {
    // first start
  }
  const id = `chorus-ref-${crypto.randomUUID()}`;
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, `${id}\n`, { mode: 0o600 });
  return id;
}
