/**
 * `chorus models …` (issue 31): install a model from a file or a URL, list the installed models,
 * list the known families. The install goes through the same installer as
 * POST /admin/models/install (install-service.ts) and so through the models service's upload:
 * the same checks, the same audit entry. Progress goes to stderr, the result to stdout.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { systemActor } from '../../core/actor.ts';
import { badRequest } from '../../core/errors.ts';
import { knownFamilies, knownFamily } from './known-models.ts';
import type { ModelInstaller, InstallProgress } from './install-service.ts';
import type { ModelsService } from './service.ts';

export const MODELS_USAGE = `  models install FILE|URL [--labels FILE|URL] [--sha256 HEX] [--name N] [--version V]
                 [--family ID] [--attribution TEXT] [--default]
                                install a model (ONNX) into the hub's store; a wrong --sha256 installs nothing
  models list                   the installed models, the default first
  models known                  the known model families (licence, attribution, where published)`;

export interface ModelsCommandDeps {
  installer: Pick<ModelInstaller, 'install'>;
  models: Pick<ModelsService, 'list'>;
  close(): Promise<void>;
}

const mb = (n: number) => `${(n / 1_000_000).toFixed(1)} MB`;

/** Progress lines on stderr: one per state, and during a download at most one a second (rewritten in place on a terminal). */
function progressPrinter(): (p: InstallProgress) => void {
  const tty = process.stderr.isTTY;
  let state = '';
  let last = 0;
  return (p) => {
    const now = performance.now();
    const changed = p.state !== state;
    if (!changed && now - last < 1000) return;
    if (changed && tty && state === 'downloading') process.stderr.write('\n');
    state = p.state;
    last = now;
    const bytes =
      p.state === 'downloading'
        ? ` ${mb(p.receivedBytes)}${p.totalBytes ? ` of ${mb(p.totalBytes)} (${Math.floor((p.receivedBytes / p.totalBytes) * 100)}%)` : ''}`
        : '';
    if (tty && p.state === 'downloading') process.stderr.write(`\r${p.state}${bytes}   `);
    else process.stderr.write(`${p.state}${bytes}\n`);
  };
}

async function install(args: string[], open: () => Promise<ModelsCommandDeps>): Promise<number> {
  const { positionals, values } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      labels: { type: 'string' },
      sha256: { type: 'string' },
      name: { type: 'string' },
      version: { type: 'string' },
      family: { type: 'string' },
      attribution: { type: 'string' },
      default: { type: 'boolean', default: false },
    },
  });
  const [source, ...extra] = positionals;
  if (!source || extra.length > 0) throw badRequest(`chorus models install takes one FILE or URL\n\n${MODELS_USAGE}`);
  const family = knownFamily(values.family);
  // Without --name: the family's name, else the file's name without its extension.
  const name = values.name?.trim() || family?.name || decodeURIComponent(path.basename(new URL(source, 'file:///').pathname)).replace(/\.[^.]*$/, '') || 'model';
  const deps = await open();
  try {
    const m = await deps.installer.install(
      systemActor(),
      {
        model: source,
        labels: values.labels ?? null,
        sha256: values.sha256 ?? null,
        name,
        version: values.version ?? family?.version ?? null,
        knownFamily: values.family ?? null,
        attribution: values.attribution ?? null,
        makeDefault: values.default,
      },
      { allowFiles: true, onProgress: progressPrinter() },
    );
    console.log(`Installed model ${m.id} "${m.name}"${m.version ? ` version ${m.version}` : ''}${m.isDefault ? ', the hub default' : ''}`);
    console.log(`Labels: ${m.labelCount}${values.labels ? '' : ' (from the species catalog)'}`);
    console.log(
      m.unknownLabelCount === 0
        ? 'Unknown labels: none (every label maps into the species catalog)'
        : `Unknown labels: ${m.unknownLabelCount}${m.unknownLabelCount > m.unknownLabels.length ? ` (first ${m.unknownLabels.length})` : ''}: ${m.unknownLabels.join('; ')}`,
    );
    console.log(`SHA-256: ${m.sha256}${values.sha256 ? ' (matches --sha256)' : ''}`);
    if (m.attribution) console.log(`Attribution shown with its detections: ${m.attribution}`);
    return 0;
  } finally {
    await deps.close();
  }
}

async function list(open: () => Promise<ModelsCommandDeps>): Promise<number> {
  const deps = await open();
  try {
    const { models } = await deps.models.list();
    for (const m of models) {
      const flags = [m.isDefault ? 'default' : null, m.enabled ? null : 'disabled', m.builtin ? 'built-in' : null].filter(Boolean).join(', ');
      console.log(
        [m.id, m.name, m.version ?? '-', `${m.labelCount} labels`, m.family, m.knownFamily ?? '-', m.sha256 ? m.sha256.slice(0, 12) : '-', flags]
          .join('\t')
          .trimEnd(),
      );
    }
    return 0;
  } finally {
    await deps.close();
  }
}

function known(): number {
  for (const f of knownFamilies()) {
    console.log(`${f.id}\t${f.name} ${f.version}\t${f.licence.name}\t${f.input.seconds} s at ${f.input.sampleRate / 1000} kHz (${f.inputFamily})`);
    console.log(`  attribution: ${f.attribution}`);
    for (const p of f.pages) console.log(`  ${p.label}: ${p.url}`);
    for (const v of f.variants) {
      const size = v.sizeBytes !== null ? `${v.sizeBytes} bytes` : (v.approxSize ?? 'size unknown');
      console.log(`  variant ${v.id}: ${v.modelUrl ?? 'no ONNX file from the publisher'} (${size}; sha256 ${v.sha256 ?? 'unknown: give the publisher\'s'})`);
    }
  }
  return 0;
}

/** Runs `chorus models <sub> …`; `open` builds the hub's parts only for the commands that need them. */
export async function modelsCommand(args: string[], open: () => Promise<ModelsCommandDeps>): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'install') return install(rest, open);
  if (sub === 'list') return list(open);
  if (sub === 'known') return known();
  throw badRequest(`Unknown models command "${sub ?? ''}"\n\n${MODELS_USAGE}`);
}
