// The filesystem transport runs the transport contract, watching and polling-only.
import { test } from 'uvu';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createFsTransport } from '../../src/transports/fs/transport.ts';
import { connectFsClient } from '../../src/transports/fs/client-fs.ts';
import { resolveFsOptions } from '../../src/transports/fs/options.ts';
import { captureLogger } from './helpers/fakes.ts';
import { transportContract, type ContractPeer } from './transport-contract.ts';
import { systemClock } from '../../src/node/clock.ts';

for (const watch of [true, false]) {
  transportContract(
    watch ? 'fs (watching)' : 'fs (polling)',
    async () => {
      const dir = mkdtempSync(`${tmpdir()}/claw-fs-contract-`);
      const transport = createFsTransport({
        dir,
        clock: systemClock,
        options: resolveFsOptions({ watch, poll_interval_ms: watch ? 1000 : 20, fsync: false }),
        log: captureLogger(),
        maxFrameBytes: 1024,
      });
      let n = 0;
      const clients: { close(): Promise<void> }[] = [];
      return {
        transport,
        maxFrameBytes: 1024,
        async peer(): Promise<ContractPeer> {
          // The inbox exists once the transport started; each peer has its own reply directory.
          const c = await connectFsClient(`fs:${dir}?poll_interval_ms=20&watch=${watch}`, { baseDir: '/', sender: `peer${++n}` });
          clients.push(c);
          const notifications: any[] = [];
          c.onNotification!((m) => notifications.push(m));
          return { send: (text, o) => c.sendRaw!(text, o), notifications, close: () => c.close() };
        },
        async cleanup() {
          for (const c of clients) await c.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
    { multiSender: true, deliveryMs: 3000 },
  );
}

test.run();
