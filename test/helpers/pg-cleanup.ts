// Drops test databases older than three hours: what a crashed or killed run left (pg-template.ts).
import { dropOldTestDatabases } from './pg-template.ts';

const url = process.env.DATABASE_URL;
if (url) {
  const dropped = await dropOldTestDatabases(url, 3 * 3600).catch((err: Error) => {
    console.error(`test database clean-up skipped: ${err.message}`);
    return 0;
  });
  if (dropped > 0) console.log(`dropped ${dropped} leftover test databases`);
}
