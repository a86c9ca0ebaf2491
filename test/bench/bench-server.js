// The benchmark's stand-in for the service: a minimal JSON server for a process of its own.
// POST /emails answers 201 with one message record, GET /emails answers 200 with an array of them.
// Bodies are built once (a send's answer only gets its id filled in), so the server spends as little
// of its core as it can on each answer.
// It prints `{"port":N}` once listening, answers GET /__bench/stats with its counters and CPU time,
// and on SIGTERM prints its counters and exits.
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';

const LIST_LENGTH = Number(process.env.BENCH_LIST_LENGTH ?? 10);

function record(id) {
  const at = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, id % 1000)).toISOString();
  return {
    id,
    providerEmailId: `prov_${id}`,
    fromAddress: 'app@example.com',
    toAddresses: ['ada@example.com'],
    subject: 'Your receipt',
    status: 'sent',
    errorMessage: null,
    scheduledAt: null,
    trackOpens: false,
    trackClicks: false,
    openedAt: null,
    clickedAt: null,
    openCount: 0,
    clickCount: 0,
    createdAt: at,
    updatedAt: at,
  };
}

function answer(status, value) {
  const body = Buffer.from(JSON.stringify(value));
  const headers = ['content-type', 'application/json', 'content-length', String(body.length)];
  return { status, body, headers };
}

// Every send gets a record of its own (a new id), as from the real service; the text around the id is
// made once. The record is ASCII, so its length in characters is its length in bytes.
const ID_MARK = 987654321;
const [createdHead, createdTail] = JSON.stringify({ ...record(1), id: ID_MARK }).split(String(ID_MARK));
let nextId = 1;

function replyCreated(res) {
  const body = createdHead + nextId++ + createdTail;
  res.writeHead(201, ['content-type', 'application/json', 'content-length', String(body.length)]);
  res.end(body);
}

const listed = answer(
  200,
  Array.from({ length: LIST_LENGTH }, (_, i) => record(i + 1)),
);
const missing = answer(404, { error: 'not found' });
const unauthorized = answer(401, { error: 'missing credentials' });

const clientSockets = new WeakSet();
const counts = { connections: 0, posts: 0, lists: 0, other: 0, unauthorized: 0, missingKey: 0, bodyBytes: 0 };

function reply(res, { status, body, headers }) {
  res.writeHead(status, headers);
  res.end(body);
}

const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  if (req.headers.authorization === undefined && req.url !== '/__bench/stats') {
    counts.unauthorized++;
    req.resume();
    reply(res, unauthorized);
    return;
  }
  const path = req.url;
  if (!clientSockets.has(req.socket) && path !== '/__bench/stats') {
    clientSockets.add(req.socket); // connections that carried a client's requests (stats calls aside)
    counts.connections++;
  }
  if (req.method === 'POST' && path === '/emails') {
    counts.posts++;
    if (req.headers['idempotency-key'] === undefined) counts.missingKey++;
    // Consume the whole request body before answering, as a real service would.
    req.on('data', (chunk) => {
      counts.bodyBytes += chunk.length;
    });
    req.on('end', () => replyCreated(res));
    return;
  }
  req.resume();
  if (path === '/__bench/stats') {
    // For the driver: how busy this process was, to tell a saturated server from a slow client.
    const cpu = process.cpuUsage();
    const stats = { counts, cpu_ms: (cpu.user + cpu.system) / 1000, at_ms: performance.now() };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(stats));
    return;
  }
  if (req.method === 'GET' && (path === '/emails' || path.startsWith('/emails?'))) {
    counts.lists++;
    reply(res, listed);
    return;
  }
  counts.other++;
  reply(res, missing);
});

server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});

process.on('SIGTERM', () => {
  process.stdout.write(JSON.stringify({ counts }) + '\n');
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
