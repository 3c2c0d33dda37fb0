// `console` exporter (§5.11): one JSON line per event on stderr — stdout carries protocol messages only.
import type { Exporter } from '../exporter.ts';

export function consoleExporter(writeStderr: (line: string) => void): Exporter {
  return {
    type: 'console',
    async export(batch) {
      writeStderr(batch.map((e) => JSON.stringify({ telemetry: e })).join('\n') + '\n');
    },
  };
}
