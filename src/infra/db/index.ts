import path from 'node:path';
import fs from 'node:fs';
import type { Config } from '../../config.ts';
import type { Db } from './types.ts';
import { createPostgresDb } from './postgres.ts';
import { createPgliteDb } from './pglite.ts';

export type { Db, Row } from './types.ts';
export { containsPattern } from './types.ts';
export { col, shape, Count, type RowOf, type RowShape } from './shape.ts';

export async function createDb(config: Pick<Config, 'databaseUrl' | 'dataDir'> & { databaseSchema?: string | null }): Promise<Db> {
  if (config.databaseUrl) return createPostgresDb({ url: config.databaseUrl, schema: config.databaseSchema });
  const dir = path.join(config.dataDir, 'db');
  fs.mkdirSync(dir, { recursive: true });
  const { db, dump } = await createPgliteDb({ dataDir: dir });
  return Object.assign(db, { dumpDataDir: dump });
}
export { PART_BREAK, type CopyColumnOptions } from './copy-binary.ts';
