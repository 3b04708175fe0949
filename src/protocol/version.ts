import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/** The package's version: what the hub reports and what the bundled reference satellite calls itself. */
export const PACKAGE_VERSION: string = (require('../../package.json') as { version: string }).version;
