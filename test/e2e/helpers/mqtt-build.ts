// Builds the MQTT-enabled claw bundle (helpers/mqtt-claw.ts) with the production esbuild options and aliases
// (build.config.mjs, loaded at run time so the test bundle does not inline it), so the e2e tests run the
// slimmed mqtt.js exactly as it would ship.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './claw-process.ts';

export async function buildMqttClaw(): Promise<{ file: string; raw: number }> {
  // Relative to ROOT (the tests' cwd): bundle() places files beside the outfile by its relative path.
  const rel = `.build/claw-mqtt-${process.pid}.mjs`;
  const file = join(ROOT, rel);
  const config = pathToFileURL(join(ROOT, 'build.config.mjs')).href;
  const { bundle } = (await import(config)) as { bundle(o: { entry: string; outfile: string }): Promise<{ raw: number }> };
  const r = await bundle({ entry: join(ROOT, 'test/e2e/helpers/mqtt-claw.ts'), outfile: rel });
  return { file, raw: r.raw };
}
