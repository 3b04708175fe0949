#!/usr/bin/env node
// Runs the TypeScript entry point through tsx so operators need no build step.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const tsx = path.join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs');
const res = spawnSync(process.execPath, [tsx, path.join(root, 'src', 'main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(res.status ?? 1);
