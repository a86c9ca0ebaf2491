import { trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { EmailSendUncertainError, EmailValidationError } from '../../lib/index.js';
import {
  captureEmailTraceContext,
  runInEmailTraceContext,
} from '../../lib/telemetry/trace-context.helpers.js';
import { emailApp, TEST_API_KEY, useScriptedEmailApp } from '../support/email-app.js';
import { failure, input, recordFor, script } from '../delivery/delivery.support.js';
import { attributeTexts, registerMemoryOtel, type MemoryOtel } from './otel.support.js';

const emailSpans = (otel: MemoryOtel): ReadableSpan[] =>
  otel.spans().filter((s) => s.name.startsWith('email.'));
const only = (otel: MemoryOtel): ReadableSpan => {
  const spans = emailSpans(otel);
  expect(spans).toHaveLength(1);
  return spans[0];
};
const events = (span: ReadableSpan, name: string) =>
  span.events.filter((e) => e.name === name).map((e) => e.attributes ?? {});

describe('OpenTelemetry spans and metrics (SDK registered, in-memory exporters)', () => {
  let otel: MemoryOtel;
  beforeAll(() => {
    otel = registerMemoryOtel();
  });
  const exported: string[] = [];
  afterAll(() => otel.shutdown());
  beforeEach(() => otel.reset());
  afterEach(() => void exported.push(...otel.spans().flatMap(attributeTexts)));
  const app = useScriptedEmailApp({ timeoutMs: 5000 }); // declared after the hooks above, so it runs after them

  it("a plain send: one span, child of the caller's active span, with status, attempts, id and key", async () => {
    script(app.server, [201]);
    const tracer = trace.getTracer('test');
    const parent = await tracer.startActiveSpan('request', async (span) => {
      await app.email.send(input, { idempotencyKey: 'order-1-confirmation-key' });
      span.end();
      return span;
    });
    const span = only(otel);
    expect(span.name).toBe('email.send');
    expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span.spanContext().traceId).toBe(parent.spanContext().traceId);
    expect(span.attributes).toMatchObject({
      'email.operation': 'send',
      'email.outcome': 'sent',
      'email.attempts': 1,
      'http.response.status_code': 201,
      'email.message.id': 100,
      'email.idempotency_key': 'order-1-confirmation-key',
    });
    expect(events(span, 'email.attempt')).toEqual([
      {
        'email.attempt': 1,
        'http.request.method': 'POST',
        'url.path': '/emails',
        'http.response.status_code': 201,
      },
    ]);
  });

  it('a retried send: each attempt is an event, the span counts both', async () => {
    script(app.server, [{ status: 429, headers: { 'retry-after': '0' } }, 201]);
    await app.email.send(input);
    const span = only(otel);
    expect(span.attributes).toMatchObject({
      'email.outcome': 'sent',
      'email.attempts': 2,
      'http.response.status_code': 201,
    });
    expect(typeof span.attributes['email.idempotency_key']).toBe('string'); // the key made for the call
    const attempts = events(span, 'email.attempt');
    expect(
      attempts.map((a) => [a['email.attempt'], a['http.response.status_code'], a['error.type']]),
    ).toEqual([
      [1, 429, 'EmailRateLimitError'],
      [2, 201, undefined],
    ]);
    expect(typeof attempts[0]['email.retry.delay_ms']).toBe('number');
  });

  it('a reconciled send: the look-up and the record found are on the span', async () => {
    script(app.server, ['reset'], () => [recordFor(5)]);
    const record = await app.email.send(input, { maxRetries: 0 }); // no retry left: the look-up settles it
    expect(record.id).toBe(5);
    const span = only(otel);
    expect(span.attributes).toMatchObject({
      'email.outcome': 'sent',
      'email.reconciled': true,
      'email.message.id': 5,
      'email.attempts': 1,
    });
    expect(events(span, 'email.reconcile')).toEqual([
      { 'email.reconcile.result': 'found', 'email.message.id': 5 },
    ]);
    const paths = events(span, 'email.attempt').map((a) => `${a['http.request.method']} ${a['url.path']}`);
    expect(paths).toEqual(['POST /emails', 'GET /emails', 'GET /emails/5']);
  });

  it('an uncertain send: outcome uncertain, error status, the key, and the uncertain-sends counter', async () => {
    script(app.server, [500]);
    const err = await failure(app.email.send(input, { maxRetries: 0 }));
    expect(err).toBeInstanceOf(EmailSendUncertainError);
    const span = only(otel);
    expect(span.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(span.attributes).toMatchObject({
      'email.outcome': 'uncertain',
      'http.response.status_code': 500,
      'error.type': 'EmailSendUncertainError',
      'email.idempotency_key': (err as EmailSendUncertainError).idempotencyKey,
    });
    expect(events(span, 'email.reconcile')).toEqual([{ 'email.reconcile.result': 'not-found' }]);
    const uncertain = await otel.points('email.client.uncertain_sends');
    expect(uncertain.find((p) => p.attributes['email.operation'] === 'send')?.value).toBe(1);
  });

  it('a batch: one span with its size; sends counted per message', async () => {
    script(app.server, [201]);
    const before = await otel.points('email.client.sends');
    const sentBefore = before.find((p) => p.attributes['email.operation'] === 'sendBatch')?.value ?? 0;
    await app.email.sendBatch([
      { from: 'app@example.com', to: ['ada@example.com'], subject: 'Order 1', text: 'Hello' },
      { from: 'app@example.com', to: ['bob@example.com'], subject: 'Order 1', text: 'Hello' },
    ]);
    const span = only(otel);
    expect(span.name).toBe('email.sendBatch');
    expect(span.attributes).toMatchObject({
      'email.batch.size': 2,
      'email.outcome': 'sent',
      'email.attempts': 1,
    });
    const after = await otel.points('email.client.sends');
    const sent = after.find(
      (p) => p.attributes['email.operation'] === 'sendBatch' && p.attributes['email.outcome'] === 'sent',
    );
    expect((sent?.value as number) - (sentBefore as number)).toBe(2);
  });

  it('reads and findSent get their own spans; an invalid send is recorded without its message', async () => {
    script(app.server, [201], () => []);
    await app.email.list({ limit: 5 });
    await app.email.findSent(input, { since: new Date() });
    await failure(app.email.send({ ...input, to: ['not an address ada@example.com'] }));
    const spans = emailSpans(otel);
    expect(spans.map((s) => [s.name, s.attributes['email.outcome']])).toEqual([
      ['email.list', 'ok'],
      ['email.findSent', 'ok'],
      ['email.send', 'invalid'],
    ]);
    expect(spans[2].status.message).toBe(EmailValidationError.name);
    const durations = await otel.points('email.client.operation.duration');
    expect(durations.some((p) => p.attributes['email.operation'] === 'list')).toBe(true);
    const attempts = await otel.points('email.client.attempts');
    expect(attempts.length).toBeGreaterThan(0);
  });

  it('a job carries the trace context of the request that queued it', async () => {
    script(app.server, [201]);
    const tracer = trace.getTracer('test');
    const { carried, traceId } = tracer.startActiveSpan('request', (span) => {
      const c = captureEmailTraceContext();
      span.end();
      return { carried: JSON.parse(JSON.stringify(c)), traceId: span.spanContext().traceId };
    });
    expect(carried.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await runInEmailTraceContext(carried, () => app.email.send(input));
    expect(only(otel).spanContext().traceId).toBe(traceId);
  });

  it('telemetry: false turns spans off', async () => {
    const off = await emailApp({ baseUrl: app.server.url, telemetry: false });
    script(app.server, [201]);
    await off.email.send(input);
    await off.close();
    expect(emailSpans(otel)).toEqual([]);
  });

  it('no exported attribute value holds the API key, an address, the subject or a body', async () => {
    const names = ['sends', 'attempts', 'uncertain_sends', 'operation.duration'].map(
      (n) => `email.client.${n}`,
    );
    const points = (await Promise.all(names.map((n) => otel.points(n)))).flat();
    expect(points.length).toBeGreaterThan(5);
    const texts = [
      ...exported,
      ...points.flatMap((p) => Object.values(p.attributes).map((v) => JSON.stringify(v))),
    ];
    expect(texts.length).toBeGreaterThan(100);
    const joined = texts.join('\n').toLowerCase();
    for (const secret of [
      TEST_API_KEY,
      'ada@example.com',
      'app@example.com',
      'bob@example.com',
      'Order 1',
      'Hello',
      'Shop',
    ]) {
      expect(joined).not.toContain(secret.toLowerCase());
    }
    expect(joined).toContain('order-1-confirmation-key'); // what may be there is there
  });
});
