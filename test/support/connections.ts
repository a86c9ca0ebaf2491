import type { Redis } from 'ioredis';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/** A TCP server at an address of its own that only counts the connections made to it (a stand-in for Redis). */
export interface CountingServer {
  /** `redis://127.0.0.1:<port>` (a password may be added by the caller). */
  readonly url: string;
  readonly port: number;
  /**
   * How many connections arrived before now: a connection of its own is made, and the server accepts in order, so
   * any connection made before this call arrives before it.
   */
  arrivedBeforeNow(): Promise<number>;
  close(): Promise<void>;
}

/** Starts a `CountingServer` on 127.0.0.1: it accepts and never answers anything. */
export async function startCountingServer(): Promise<CountingServer> {
  const arrived: Socket[] = [];
  const server = createServer((socket) => {
    arrived.push(socket);
    socket.on('data', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async arrivedBeforeNow() {
      const mark = connect(port, '127.0.0.1');
      await once(mark, 'connect');
      const from = mark.localPort;
      const at = () => arrived.findIndex((s) => s.remotePort === from);
      while (at() < 0) await new Promise((r) => setTimeout(r, 20));
      mark.destroy();
      return at();
    },
    async close() {
      for (const socket of arrived) socket.destroy();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
}

/** The clients a Redis has now, other than `checker` itself. */
export async function redisClientsOf(checker: Redis): Promise<number> {
  return (
    String(await checker.client('LIST'))
      .trim()
      .split('\n').length - 1
  );
}

/** Waits until `ok` answers true, asking every 20 ms (the spec's timeout bounds it). */
export async function until(ok: () => Promise<boolean>): Promise<void> {
  while (!(await ok())) await new Promise((r) => setTimeout(r, 20));
}
