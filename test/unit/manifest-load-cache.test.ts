// The manifest cache (src/manifest/load-cache.ts, docs/startup.md): a clean load is kept with the text of every
// file it read and used while those files read the same; any change — to the root file or to a file it
// references — another build, other registries, a glob (directory listing), an invalid manifest or a damaged
// record means a real load. What a kept result gives back is deep-equal to a real load of the same files.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadManifestFile } from '../../src/manifest/loader.ts';
import { sameJson, type ManifestCache } from '../../src/manifest/load-cache.ts';
import type { SourceReader } from '../../src/manifest/reader.ts';
import { createFsReader } from '../../src/node/fs-reader.ts';


/** An in-memory store that counts its writes, and a reader that counts reads per file. */
function setup(build = 'b1') {
  const records = new Map<string, Uint8Array>();
  let writes = 0;
  const cache: ManifestCache = {
    build,
    store: {
      read: (k) => records.get(k),
      write: (k, d) => {
        writes++;
        records.set(k, d);
      },
    },
  };
  const fsReader = createFsReader();
  const reads: string[] = [];
  const reader: SourceReader = {
    read: (p) => (reads.push(p), fsReader.read(p)),
    list: (d) => fsReader.list(d),
  };
  return { cache, records, reader, reads, writes: () => writes };
}

const ROOT = `claw: "0.3.0"
kind: Claw
metadata:
  name: "cache-bot"
  version: "0.1.0"
spec:
  identity: "./identity.yaml"
  providers:
    - inline:
        protocol: "openai-compatible"
        endpoint: "http://localhost:11434/v1"
        model: "llama3"
        auth:
          type: "none"
  tools:
    - "./tools/echo.yaml"
`;
const IDENTITY = `claw: "0.3.0"
kind: Identity
metadata:
  name: "cache-identity"
spec:
  personality: "Helpful."
`;
const ECHO = `claw: "0.3.0"
kind: Tool
metadata:
  name: "echo"
spec:
  description: "Echo"
  input_schema: { type: object }
`;

/** A manifest in three files in a fresh directory. */
function project(): { dir: string; file: string; identity: string } {
  const dir = mkdtempSync(join(tmpdir(), 'claw-mcache-'));
  mkdirSync(join(dir, 'tools'));
  writeFileSync(join(dir, 'claw.yaml'), ROOT);
  writeFileSync(join(dir, 'identity.yaml'), IDENTITY);
  writeFileSync(join(dir, 'tools', 'echo.yaml'), ECHO);
  return { dir, file: join(dir, 'claw.yaml'), identity: join(dir, 'identity.yaml') };
}

test('a clean load is kept; the next load of unchanged files gives the same manifest without loading again', async () => {
  const { dir, file } = project();
  try {
    const s = setup();
    const first = await loadManifestFile(file, { reader: s.reader, cache: s.cache });
    assert.equal(first.issues, []);
    assert.is(first.manifest!.tools[0].name, 'echo');
    assert.is(s.writes(), 1);
    const second = await loadManifestFile(file, { reader: s.reader, cache: s.cache });
    assert.equal(second, first, 'deep-equal to the real load');
    assert.is(s.writes(), 1, 'a hit writes nothing');
    // Without a cache at all: the same value again.
    assert.equal(await loadManifestFile(file, { reader: s.reader }), first);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('one changed byte in the root file: a real load (the new value), and the record is replaced', async () => {
  const { dir, file } = project();
  try {
    const s = setup();
    const first = await loadManifestFile(file, { reader: s.reader, cache: s.cache });
    writeFileSync(file, ROOT.replace('version: "0.1.0"', 'version: "0.1.1"'));
    const second = await loadManifestFile(file, { reader: s.reader, cache: s.cache });
    assert.is(first.manifest!.version, '0.1.0');
    assert.is(second.manifest!.version, '0.1.1');
    assert.is(s.writes(), 2);
    // An edit that makes it invalid is reported, never answered from the record.
    writeFileSync(file, ROOT.replace('claw: "0.3.0"', 'claw: "9.9.9"'));
    const third = await loadManifestFile(file, { reader: s.reader, cache: s.cache });
    assert.is(third.manifest, undefined);
    assert.ok(third.issues.length > 0);
    assert.is(s.writes(), 2, 'an invalid manifest is not kept');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a change in a file the manifest references is noticed; a load that lists a directory is not kept', async () => {
  const { dir, file, identity } = project();
  try {
    const s = setup();
    const first = await loadManifestFile(file, { reader: s.reader, cache: s.cache });
    assert.is(first.manifest!.identity.spec.personality, 'Helpful.');
    writeFileSync(identity, IDENTITY.replace('Helpful.', 'Terse.'));
    const second = await loadManifestFile(file, { reader: s.reader, cache: s.cache });
    assert.is(second.manifest!.identity.spec.personality, 'Terse.');
    assert.is(s.writes(), 2, 'changed reference: loaded again and kept again');
    writeFileSync(file, ROOT.replace('"./tools/echo.yaml"', '"./tools/*.yaml"'));
    const globbed = await loadManifestFile(file, { reader: s.reader, cache: s.cache });
    assert.equal(globbed.issues, []);
    assert.is(s.writes(), 2, 'a glob lists a directory: never kept (a new file there would go unnoticed)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('another build, other registries, a missing file or a damaged record: a real load', async () => {
  const { dir, file } = project();
  try {
    const s = setup('b1');
    await loadManifestFile(file, { reader: s.reader, cache: s.cache });
    const other = { ...s.cache, build: 'b2' };
    await loadManifestFile(file, { reader: s.reader, cache: other });
    assert.is(s.writes(), 2, 'another build does not use b1 records');
    await loadManifestFile(file, { reader: s.reader, cache: other, registries: [{ url: 'https://registry.example/v1' }] as any });
    assert.is(s.writes(), 3, 'other registries: a real load');
    for (const junk of ['', 'null', '{"v":1}', '{"v":1,"build":"b2","path":"x","registries":"null","inputs":[],"manifest":{}}', '\u00ff\u00fe']) {
      s.records.set(file, new TextEncoder().encode(junk));
      const r = await loadManifestFile(file, { reader: s.reader, cache: other });
      assert.equal(r.issues, [], `record ${JSON.stringify(junk)}`);
      assert.is(r.manifest!.name, 'cache-bot');
    }
    rmSync(join(dir, 'tools', 'echo.yaml'));
    const gone = await loadManifestFile(file, { reader: s.reader, cache: other });
    assert.is(gone.manifest, undefined, 'a missing referenced file is an error, not a cached answer');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sameJson: only values a JSON round trip gives back exactly', () => {
  assert.ok(sameJson(JSON.parse('{"a":[1,"x",null,true,{"b":{}}]}'), { a: [1, 'x', null, true, { b: {} }] }));
  assert.not.ok(sameJson({}, { a: undefined }), 'an undefined member is dropped by JSON');
  assert.not.ok(sameJson({}, new Map()));
  assert.not.ok(sameJson(null, NaN));
  assert.not.ok(sameJson('2026-01-01T00:00:00.000Z', new Date(0)));
  assert.not.ok(sameJson([null], [undefined]));
  assert.not.ok(sameJson({ a: 1 }, { a: 1, b: 2 }));
});

test.run();
