/**
 * The `chorus` command: reads the command and loads only the code it runs (src/commands/), so
 * `help`, a mistyped command or a bad setting answers at once and `chorus satellite` on a
 * Raspberry Pi does not load the hub.
 */
import { ConfigError, loadConfig } from './config.ts';
import { AppError } from './core/errors.ts';
import { MODELS_USAGE } from './modules/models/cli.ts';

const USAGE = `chorus <command>

  serve                         start the hub (default)
  worker                        run inference workers only (CHORUS_MODE=worker; needs REDIS_URL and DATABASE_URL)
  migrate                       apply database migrations and exit (the species catalog too)
  jobs failed [--limit N]       list chunks whose inference job failed all its attempts
  jobs retry [CHUNK_ID ...]     retry failed inference jobs (all of them when no id is given)
  backup --out FILE [--data DIR] [--force]
                                archive the embedded database, objects and secret (the hub may run)
  restore FILE [--data DIR] [--force]
                                restore such an archive into an empty data dir (hub stopped)
  admin create-user --email E --name N --password P [--admin]
  admin make-admin --email E [--revoke]
  admin reset-password --email E [--password P]   (prints a generated one when omitted)
${MODELS_USAGE}
  satellite --hub URL --token BEARER --tenant ID [--name NAME] [--source synthetic|FILE.wav|FOLDER]
            [--chunks N] [--credentials FILE] [--data DIR] [--ws]
                                run the reference satellite (chorus satellite --help for all options)

Configuration comes from the environment; see README.md.`;

async function main() {
  const [command = 'serve', ...rest] = process.argv.slice(2);
  // The configuration is read before the command's code loads: a bad setting is refused at once.
  if (command === 'serve') return (await import('./commands/hub.ts')).serve(loadConfig(process.env));
  // DESIGN.md §3: `chorus worker` is `serve` in mode worker (inference only; needs REDIS_URL and DATABASE_URL).
  if (command === 'worker') return (await import('./commands/hub.ts')).serve(loadConfig({ ...process.env, CHORUS_MODE: 'worker' }));
  if (command === 'migrate') return (await import('./commands/operator.ts')).runMigrate(loadConfig());
  if (command === 'admin') {
    const config = loadConfig();
    return (await import('./commands/operator.ts')).admin(rest, USAGE, config);
  }
  if (command === 'jobs') {
    const config = loadConfig();
    return (await import('./commands/operator.ts')).jobs(rest, USAGE, config);
  }
  if (command === 'models') return (await import('./commands/operator.ts')).models(rest);
  if (command === 'backup' || command === 'restore') {
    const { backupCommand, restoreCommand } = await import('./ops/backup.ts');
    process.exit(await (command === 'backup' ? backupCommand : restoreCommand)(rest));
  }
  if (command === 'satellite') {
    const { satelliteCommand } = await import('./satellite/cli.ts');
    // The satellite speaks the protocol alone; its optional sound classifier is the hub's ONNX runner, lent here.
    const { loadSoundClassifier } = await import('./inference/sound-classifier.ts');
    process.exit(await satelliteCommand(rest, { loadSoundClassifier }));
  }
  if (command === 'help' || command === '--help') return console.log(USAGE);
  throw new Error(`Unknown command "${command}"\n\n${USAGE}`);
}

main().catch(async (err) => {
  const { SchemaBehindError } = await import('./database.ts');
  const message =
    err instanceof ConfigError
      ? `Configuration error: ${err.message}`
      : err instanceof SchemaBehindError
        ? err.message
        : err instanceof AppError
          ? `${err.code}: ${err.message}`
          : String(err instanceof Error ? err.message : err);
  // A hub that cannot start says so in its log's format (one JSON line); a command, in plain words.
  const hub = ['serve', 'worker'].includes(process.argv[2] ?? 'serve');
  if (!hub) console.error(message);
  else {
    const log = (await import('./core/log.ts')).createLogger({ level: 'info' });
    if (err instanceof ConfigError || err instanceof SchemaBehindError) log.fatal(message);
    else log.fatal({ err }, message);
  }
  process.exit(1);
});
