/**
 * Mosquitto 2 with the dynamic-security plugin, started by a test on a free port (the hub's
 * production broker). Skip a suite when MOSQUITTO is null (the binary is not installed).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.ts';

export const MOSQUITTO_SKIP = 'the mosquitto binary is not installed (apt-get install -y mosquitto mosquitto-clients)';

function which(bin: string, extra: string[]): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), ...extra]) {
    const p = path.join(dir, bin);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return null;
}

export const MOSQUITTO = which('mosquitto', ['/usr/sbin', '/usr/local/sbin']);
const MOSQUITTO_CTRL = which('mosquitto_ctrl', ['/usr/bin', '/usr/local/bin']);

function dynsecPlugin(): string {
  const candidates = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib', '/usr/local/lib', '/usr/lib64'];
  for (const dir of candidates) {
    const p = path.join(dir, 'mosquitto_dynamic_security.so');
    if (fs.existsSync(p)) return p;
  }
  try {
    const multiarch = fs.readdirSync('/usr/lib').map((d) => path.join('/usr/lib', d, 'mosquitto_dynamic_security.so'));
    const found = multiarch.find((p) => fs.existsSync(p));
    if (found) return found;
  } catch {
    // fall through
  }
  throw new Error('mosquitto is installed but mosquitto_dynamic_security.so was not found');
}

/** The uid/gid of the `mosquitto` user that Mosquitto drops to when started as root. */
function mosquittoUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('mosquitto:'));
  if (!line) return null;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * `dynsec init` gives the admin dynsec rights and receive-all, not publish: the hub needs full
 * access, so its role gets publishClientSend on `#` (the README's one-time grant; done in the file
 * before start because `mosquitto_ctrl addRoleACL admin …` kicks its own admin session and then
 * waits out its 10 s timeout). A second login, `dynsec-only`, keeps the init rights only, to show
 * the hub's start-up check.
 */
function grantAdminAndAddDynsecOnly(file: string, admin: string) {
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  const adminClient = json.clients.find((c: { username: string }) => c.username === admin);
  const adminRole = json.roles.find((r: { rolename: string }) => r.rolename === adminClient.roles[0].rolename);
  json.roles.push({ rolename: 'dynsec-only', acls: structuredClone(adminRole.acls) });
  json.clients.push({
    ...structuredClone(adminClient),
    username: DYNSEC_ONLY,
    textName: 'dynsec rights only',
    roles: [{ rolename: 'dynsec-only' }],
  });
  adminRole.acls.push({ acltype: 'publishClientSend', topic: '#', allow: true });
  fs.writeFileSync(file, JSON.stringify(json, null, 2));
}

export const DYNSEC_ONLY = 'dynsec-only';

/** The caps deploy/mosquitto/mosquitto.conf sets on what clients send, so tests run against the shipped ones. */
const CAP_SETTINGS = /^(max_packet_size|message_size_limit|retain_available|max_inflight_bytes|max_queued_bytes)\s/;
export function deployedCaps(): string[] {
  const conf = fs.readFileSync(path.resolve(import.meta.dirname, '../../deploy/mosquitto/mosquitto.conf'), 'utf8');
  return conf
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => CAP_SETTINGS.test(l));
}

export interface RunningMosquitto {
  url: string;
  port: number;
  adminUsername: string;
  adminPassword: string;
  /** The running broker's process id (a new one after restart). */
  readonly pid: number;
  ctrl(...args: string[]): Promise<string>;
  /**
   * Stops it (SIGTERM: it saves its persistence file first) and starts it again on the same port,
   * files kept, after `pauseMs` down; resolves once it runs again.
   */
  restart(pauseMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface MosquittoOptions {
  /** `persistence true` in a folder kept across restart() (sessions and retained messages survive). */
  persistence?: boolean;
}

export async function startMosquitto(opts: MosquittoOptions = {}): Promise<RunningMosquitto> {
  if (!MOSQUITTO_CTRL) throw new Error('mosquitto_ctrl not found (Debian ships it in the mosquitto package)');
  const plugin = dynsecPlugin();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chorus-mosquitto-'));
  const dynsec = path.join(dir, 'dynamic-security.json');
  const adminUsername = 'admin';
  const adminPassword = crypto.randomBytes(16).toString('hex');
  execFileSync(MOSQUITTO_CTRL, ['dynsec', 'init', dynsec, adminUsername, adminPassword], { stdio: 'pipe' });
  grantAdminAndAddDynsecOnly(dynsec, adminUsername);
  const owner = mosquittoUser();

  const launch = async (port: number) => {
    const conf = path.join(dir, 'mosquitto.conf');
    fs.writeFileSync(
      conf,
      [
        'per_listener_settings false',
        'allow_anonymous false',
        ...(opts.persistence ? ['persistence true', `persistence_location ${dir}/`] : ['persistence false']),
        'log_dest stderr',
        ...deployedCaps(),
        `listener ${port} 127.0.0.1`,
        `plugin ${plugin}`,
        `plugin_opt_config_file ${dynsec}`,
        '',
      ].join('\n'),
    );
    if (owner) {
      // Started as root, mosquitto drops to `mosquitto`, which must own the dynsec file's folder.
      for (const f of [dir, dynsec, conf]) fs.chownSync(f, owner.uid, owner.gid);
    }
    const proc = spawn(MOSQUITTO!, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const up = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(false), 10_000);
      const onData = (b: Buffer) => {
        output += b.toString();
        if (/mosquitto version \S+ running/.test(output)) done(true);
      };
      const onExit = () => done(false);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        proc.stdout!.off('data', onData);
        proc.stderr!.off('data', onData);
        proc.off('exit', onExit);
        resolve(ok);
      };
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', onData);
      proc.once('exit', onExit);
    });
    proc.stdout!.resume();
    proc.stderr!.resume();
    return { proc, up, output };
  };

  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    let { proc, up, output } = await launch(port);
    if (!up) {
      await stopProcess(proc);
      if (attempt < 3 && /address already in use/i.test(output)) continue;
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`mosquitto did not start:\n${output}`);
    }
    return {
      url: `mqtt://127.0.0.1:${port}`,
      port,
      adminUsername,
      adminPassword,
      get pid() {
        return proc.pid!;
      },
      /** mosquitto_ctrl exits 0 even when a command fails: its output carries the error text. */
      async ctrl(...args) {
        const { stdout, stderr } = await promisify(execFile)(MOSQUITTO_CTRL, [
          '-h',
          '127.0.0.1',
          '-p',
          String(port),
          '-u',
          adminUsername,
          '-P',
          adminPassword,
          ...args,
        ]);
        return stdout + stderr.replace(/^Warning: You are running mosquitto_ctrl without encryption\.\n.*\n\n?/m, '');
      },
      async restart(pauseMs = 0) {
        await stopProcess(proc);
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
        // The port was ours a moment ago; a client reconnecting meanwhile cannot take a listening port.
        for (let i = 0; i < 3; i++) {
          ({ proc, up, output } = await launch(port));
          if (up) return;
          await stopProcess(proc);
        }
        throw new Error(`mosquitto did not start again:\n${output}`);
      },
      async stop() {
        await stopProcess(proc);
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}

async function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}
