/**
 * `chorus <command>` as an operator runs it: a child process of `node --import tsx src/main.ts`
 * (or bin/chorus.mjs), with only the environment a command needs, run to completion.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..', '..');
export const CHORUS_MAIN = path.join(root, 'src', 'main.ts');
export const CHORUS_BIN = path.join(root, 'bin', 'chorus.mjs');
/** The arguments node needs before src/main.ts. */
export const TSX = ['--import', 'tsx'];
/** A fresh PGlite migrates on the first command: be generous. */
export const CLI_WAIT_MS = 90_000;

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Only what the commands need: nothing from the test's own environment leaks in by accident. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, NODE_ENV: 'production', ...env };
}

/** Runs a command to completion; rejects (with what it printed) if it takes longer than `waitMs`. */
export function runChorus(args: string[], env: Record<string, string>, opts: { viaBin?: boolean; waitMs?: number } = {}): Promise<CliRun> {
  const argv = opts.viaBin ? [CHORUS_BIN, ...args] : [...TSX, CHORUS_MAIN, ...args];
  const waitMs = opts.waitMs ?? CLI_WAIT_MS;
  const child = spawn(process.execPath, argv, { cwd: root, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`chorus ${args.join(' ')} did not finish in ${waitMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, waitMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
