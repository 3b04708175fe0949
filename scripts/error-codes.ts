/**
 * Every error code the hub can answer with, read from its source: the code argument of the error
 * helpers in src/core/errors.ts (and their defaults), of `new AppError(...)` and of
 * `errorBody(...)`. The dashboard's test (test/error-messages.test.ts) checks each has a message
 * for people in English and German.
 */
import fs from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../src');
const CALL = /\b(badRequest|forbidden|conflict|gone|locked|validationFailed|errorBody|AppError|OutboundRefused)\s*\(/g;
const CODE = /^[A-Z][A-Z0-9_]{2,}$/;

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'satellite' ? [] : files(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/** The argument list of the call opening at `start` (balanced parentheses, strings skipped roughly). */
function argsAt(text: string, start: number): string {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return text.slice(start + 1, i);
  }
  return '';
}

export function errorCodes(): string[] {
  const codes = new Set<string>();
  for (const file of files(SRC)) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(CALL)) {
      const args = argsAt(text, m.index + m[0].length - 1);
      for (const lit of args.matchAll(/'([A-Z][A-Z0-9_]{2,})'/g)) if (CODE.test(lit[1])) codes.add(lit[1]);
    }
    // Error bodies written as objects (the framework errors' table, refusals).
    for (const lit of text.matchAll(/\bcode: '([A-Z][A-Z0-9_]{2,})'/g)) codes.add(lit[1]);
  }
  const errorsTs = fs.readFileSync(path.join(SRC, 'core/errors.ts'), 'utf8');
  for (const lit of errorsTs.matchAll(/'([A-Z][A-Z0-9_]{2,})'/g)) codes.add(lit[1]);
  return [...codes].sort();
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(errorCodes().join('\n'));
