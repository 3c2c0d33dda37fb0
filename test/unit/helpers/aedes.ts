// An in-process MQTT broker (aedes) on a loopback port for unit tests, with its sockets set to noDelay (Nagle adds
// ~40–90 ms per exchange) and a close() that ends every connection, the listener and the broker.
import { createServer, type Socket } from 'node:net';
import { Aedes } from 'aedes';

export interface InProcessBroker {
  broker: Aedes;
  port: number;
  /** `mqtt://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

export async function startAedes(): Promise<InProcessBroker> {
  const broker = await Aedes.createBroker();
  const sockets = new Set<Socket>();
  const server = createServer((sock) => {
    sock.setNoDelay(true);
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    broker.handle(sock);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return {
    broker,
    port,
    url: `mqtt://127.0.0.1:${port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      await new Promise<void>((r) => broker.close(() => r()));
    },
  };
}
