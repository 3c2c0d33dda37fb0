// mqtt.js stays off the start-up path: in the shipped build (targets/node.ts, the entry of dist/claw.mjs, which
// registers MQTT at its composition root; production esbuild options and aliases) no module that connects (mqtt.js, mqtt-packet, our connection/transport/client code) is
// statically reachable from the entry, and the only import of mqtt.js is load.ts's dynamic one. An agent without
// MQTT therefore never evaluates it. Also: the aliases leave no readable-stream, debug, worker-timers, lru-cache,
// ws or socks code in the bundle.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = process.cwd();

test('mqtt.js, the MQTT transport and sql.js are reached through dynamic imports only (shipped entry)', async () => {
  const { build } = await import('esbuild');
  const { ALIASES } = (await import(pathToFileURL(join(ROOT, 'build.config.mjs')).href)) as { ALIASES: Record<string, string> };
  const r = await build({
    entryPoints: [join(ROOT, 'targets/node.ts')],
    bundle: true,
    minify: true,
    platform: 'node',
    format: 'esm',
    target: ['node18'],
    write: false,
    metafile: true,
    outfile: 'x.mjs',
    alias: ALIASES,
    define: { __CLAW_VERSION__: '"0"' },
    logLevel: 'error',
  });
  const inputs = r.metafile!.inputs;
  // Modules evaluated at start-up: reachable from the entry through static edges only (import statements and
  // require calls); a dynamic import starts a part that is evaluated on first use.
  const entry = 'targets/node.ts';
  const eager = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    for (const i of inputs[queue.pop()!]?.imports ?? []) {
      if (i.kind === 'dynamic-import' || i.external || eager.has(i.path)) continue;
      eager.add(i.path);
      queue.push(i.path);
    }
  }
  assert.ok(Object.keys(inputs).some((f) => f.includes('node_modules/mqtt/')), 'the build contains mqtt.js');
  const eagerMqtt = [...eager].filter((f) => /node_modules\/(mqtt|mqtt-packet|bl|rfdc)\//.test(f) || /src\/transports\/mqtt\/(load|connection|transport|link|client-mqtt|listen-mqtt|journal)\.ts$/.test(f));
  assert.equal(eagerMqtt, [], 'nothing that connects is evaluated at start-up');
  // The one module that imports mqtt.js does it dynamically.
  const edges: { from: string; to: string; kind: string }[] = [];
  for (const [from, v] of Object.entries(inputs)) for (const i of v.imports) edges.push({ from, to: i.path, kind: i.kind });
  const intoMqtt = edges.filter((e) => /node_modules\/mqtt\//.test(e.to) && !e.from.includes('node_modules/'));
  assert.equal([...new Set(intoMqtt.map((e) => `${e.from} ${e.kind}`))], ['src/transports/mqtt/load.ts dynamic-import']);
  for (const gone of ['readable-stream', 'debug', 'worker-timers', 'lru-cache', 'ws', 'socks']) {
    assert.not.ok(
      Object.keys(inputs).some((f) => f.includes(`node_modules/${gone}/`)),
      `${gone} is aliased or never reached`,
    );
  }
  // Issue 4: sql.js loads only when a manifest declares memory. Its glue and the database layer are not evaluated
  // at start-up; the only import of the glue is sqljs.ts's dynamic one (memory-module.ts imports service.ts lazily).
  assert.ok(Object.keys(inputs).some((f) => f.includes('node_modules/sql.js/')), 'the build contains the sql.js glue');
  const eagerDb = [...eager].filter((f) => /node_modules\/sql\.js\//.test(f) || /src\/memory\/(sqlite|stores)\/|src\/memory\/service\.ts$/.test(f));
  assert.equal(eagerDb, [], 'no database code is evaluated at start-up');
  const intoSqljs = edges.filter((e) => /node_modules\/sql\.js\//.test(e.to) && !e.from.includes('node_modules/'));
  assert.equal([...new Set(intoSqljs.map((e) => `${e.from} ${e.kind}`))], ['src/memory/sqlite/sqljs.ts dynamic-import']);
});

test.run();
