/**
 * A queued email continues the trace of the request that queued it: real Redis, the sandbox, and the
 * OpenTelemetry SDK with in-memory exporters. The worker's `email.job` span and the `email.send` span
 * of its attempt share the queuing request's trace id; no attribute holds the key, an address or the subject.
 */
import { context, trace } from '@opentelemetry/api';
import { startRedis, type TestRedis } from '../support/redis-server.mjs';
import { freshQueueName, mail, queueApp } from '../queue/queue.support.js';
import { attributeTexts, registerMemoryOtel, type MemoryOtel } from './otel.support.js';
import { useSandbox } from '../support/sandbox.js';

let redis: TestRedis;
const sandbox = useSandbox();
let otel: MemoryOtel;

beforeAll(async () => {
  otel = registerMemoryOtel();
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
  await otel.shutdown();
});

it('the job span and its send span continue the trace of the request that queued the job', async () => {
  const app = await queueApp(sandbox, { connection: redis.url, queueName: freshQueueName() });
  try {
    const input = mail('Traced order 4711');
    const tracer = trace.getTracer('test');
    const request = tracer.startSpan('POST /orders');
    // The queuing request's handler: its active context carries the request span.
    const queued = await context.with(trace.setSpan(context.active(), request), () => app.queue.send(input));
    request.end();
    const record = await app.queue.waitFor(queued.jobId, { timeoutMs: 10_000 });
    const traceId = request.spanContext().traceId;
    const job = otel.spans().find((s) => s.name === 'email.job');
    const send = otel.spans().find((s) => s.name === 'email.send');
    expect(job?.spanContext().traceId).toBe(traceId);
    expect(send?.spanContext().traceId).toBe(traceId);
    expect(send?.parentSpanContext?.spanId ?? (send as any)?.parentSpanId).toBe(job?.spanContext().spanId);
    expect(job?.attributes).toMatchObject({
      'messaging.system': 'bullmq',
      'messaging.message.id': queued.jobId,
      'email.job.attempt': 1,
      'email.idempotency_key': queued.idempotencyKey,
      'email.outcome': 'sent',
      'email.message.id': record.id,
    });
    const texts = [job!, send!].flatMap(attributeTexts).join('\n');
    for (const secret of [sandbox.apiKey, 'ada@example.com', 'shop@example.com', 'Traced order 4711'])
      expect(texts).not.toContain(secret);
  } finally {
    await app.close();
  }
});
