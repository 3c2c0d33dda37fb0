// A real MQTT broker for tests: Debian's mosquitto, started on a free loopback port with a generated config file.
// Note: mosquitto ignores `-p` when the config has a `listener` line, so the port goes in the config.
// Persistence is on (in a temp directory) so a broker restart keeps sessions and queued QoS 1 messages, as a
// production broker is configured to. Callers skip (with the printed reason) when mosquitto is missing.
import type { Test } from 'uvu';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Mosquitto {
  port: number;
  dir: string;
  url(path?: string): string;
  /** SIGTERM (mosquitto saves its persistence file) and wait for exit. */
  stop(): Promise<void>;
  /** Start again on the same port with the same state; an error while it still runs (a second one would be orphaned). */
  start(): Promise<void>;
  log(): string;
}

/**
 * Every broker this process started: at exit, one listener for all of them kills those still running and removes
 * their directories (a test may stop and start a broker again, so neither can go at stop()).
 */
const brokers = new Set<{ child(): ChildProcess | undefined; dir: string }>();
let exitHooked = false;
function cleanUpAtExit(b: { child(): ChildProcess | undefined; dir: string }): void {
  brokers.add(b);
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const { child, dir } of brokers) {
      child()?.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

export function findMosquitto(): string | undefined {
  for (const p of ['/usr/sbin/mosquitto', '/usr/bin/mosquitto', '/usr/local/sbin/mosquitto', '/usr/local/bin/mosquitto']) if (existsSync(p)) return p;
  for (const d of (process.env.PATH ?? '').split(':')) if (d && existsSync(join(d, 'mosquitto'))) return join(d, 'mosquitto');
  return undefined;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export async function startMosquitto(opts: { extraConfig?: string[]; anonymous?: boolean; port?: number } = {}): Promise<Mosquitto> {
  const bin = findMosquitto();
  if (!bin) throw new Error('mosquitto not found (apt-get install mosquitto; scripts/test-deps.sh installs it)');
  const dir = mkdtempSync(join(tmpdir(), 'claw-mosquitto-'));
  const port = opts.port ?? (await freePort());
  const conf = join(dir, 'mosquitto.conf');
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      `allow_anonymous ${opts.anonymous === false ? 'false' : 'true'}`,
      'persistence true',
      `persistence_location ${dir}/`,
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      'max_queued_messages 100000',
      'set_tcp_nodelay true',
      // As root, mosquitto would drop to the `mosquitto` user and could not write the temp directory.
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      ...(opts.extraConfig ?? []),
      '',
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  let log = '';
  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) throw new Error(`mosquitto on port ${port} is already running: stop() it first`);
    child = spawn(bin, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (s: string) => (log += s));
    await waitForPort(port, 5000, () => child?.exitCode !== null ? `mosquitto exited: ${log}` : undefined);
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGTERM');
    });
  };
  cleanUpAtExit({ child: () => child, dir });
  await start();
  return { port, dir, url: (path = '') => `mqtt://127.0.0.1:${port}${path}`, stop, start, log: () => log };
}

async function waitForPort(port: number, timeoutMs: number, failed: () => string | undefined): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const f = failed();
    if (f) throw new Error(f);
    const ok = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port }, () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`mosquitto did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * One broker for a test file: started before its tests, stopped after them; `track` closes what a test opened
 * (connections, transports, clients) after each test, newest first. Without mosquitto the file's broker tests
 * are skipped with the reason printed.
 */
export function useMosquitto(test: Test, name: string, opts?: Parameters<typeof startMosquitto>[0]) {
  const have = findMosquitto() !== undefined;
  if (!have) console.log(`SKIP ${name}: mosquitto not found (scripts/test-deps.sh installs it)`);
  let broker: Mosquitto | undefined;
  const open: { close(): Promise<void> | void }[] = [];
  test.before(async () => {
    if (have) broker = await startMosquitto(opts);
  });
  test.after.each(async () => {
    for (const x of open.splice(0).reverse()) await Promise.resolve(x.close()).catch(() => {});
  });
  test.after(async () => {
    await broker?.stop();
  });
  return {
    have,
    /** `when(cond)(name, fn)`: the test, or its skip without mosquitto or when `cond` is false. */
    when: (cond = true): Test['skip'] => (have && cond ? test : test.skip),
    broker: (): Mosquitto => {
      if (!broker) throw new Error('the broker is started in test.before');
      return broker;
    },
    track: <T extends { close(): Promise<void> | void }>(x: T): T => (open.push(x), x),
  };
}
