import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request as the scripted server received it. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  socket: Socket;
}

export type Handler = (req: ReceivedRequest, res: ServerResponse) => void | Promise<void>;

/** A tiny node:http server on 127.0.0.1 whose answers each test scripts. */
export interface ScriptedServer {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Distinct sockets that carried requests. */
  sockets: Set<Socket>;
  /** Sockets opened, whether or not a request came. */
  connections: number;
  handle(handler: Handler): void;
  close(): Promise<void>;
  server: Server;
}

/** Sends `body` as JSON with `status`. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export async function startScriptedServer(initial?: Handler): Promise<ScriptedServer> {
  let handler: Handler = initial ?? ((_req, res) => json(res, 404, { error: 'not scripted' }));
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        socket: req.socket,
      };
      requests.push(received);
      sockets.add(req.socket);
      Promise.resolve(handler(received, res)).catch((err) => {
        res.destroy(err as Error);
      });
    });
  });
  const state = { connections: 0 };
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    sockets,
    get connections() {
      return state.connections;
    },
    handle(h) {
      handler = h;
    },
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
