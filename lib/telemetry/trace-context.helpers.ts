import { ATTR, INSTRUMENTATION_SCOPE } from './email-telemetry.constants.js';
import { loadedOtelApi } from '../peers/optional-peer.loader.js';

/** A trace context to carry in job data: W3C `traceparent` (and `tracestate`), plain JSON.
 */
export interface EmailTraceContext {
  traceparent: string;
  tracestate?: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The caller's active trace context as plain JSON, to store in a queued job so that the job's sends
 * continue the trace of the request that queued it; undefined when there is no recording span or
 * OpenTelemetry is off (no `EmailModule` with telemetry on has loaded `@opentelemetry/api`).
 *
 * @example
 * await queue.add('welcome', { input, trace: captureEmailTraceContext() });
 */
export function captureEmailTraceContext(): EmailTraceContext | undefined {
  const api = loadedOtelApi();
  const span = api?.trace.getActiveSpan();
  if (!api || !span) return undefined;
  const { traceId, spanId, traceFlags, traceState } = span.spanContext();
  if (!api.isSpanContextValid(span.spanContext())) return undefined;
  const flags = (traceFlags & 0xff).toString(16).padStart(2, '0');
  const context: EmailTraceContext = { traceparent: `00-${traceId}-${spanId}-${flags}` };
  const state = traceState?.serialize();
  if (state) context.tracestate = state;
  return context;
}

/**
 * Runs `fn` with `carried` (from `captureEmailTraceContext`) as its parent trace context, so the
 * spans of the sends it makes join the trace of the request that queued the job. A missing or
 * malformed context, or OpenTelemetry being off, runs `fn` as is.
 *
 * @example
 * await runInEmailTraceContext(job.data.trace, () => email.send(job.data.input));
 */
export function runInEmailTraceContext<T>(carried: EmailTraceContext | null | undefined, fn: () => T): T {
  const api = loadedOtelApi();
  const match = typeof carried?.traceparent === 'string' ? TRACEPARENT.exec(carried.traceparent) : null;
  if (!api || !match) return fn();
  const [, traceId, spanId, flags] = match;
  const spanContext = {
    traceId,
    spanId,
    traceFlags: parseInt(flags, 16),
    isRemote: true,
    traceState: carried?.tracestate ? api.createTraceState(carried.tracestate) : undefined,
  };
  if (!api.isSpanContextValid(spanContext)) return fn();
  return api.context.with(api.trace.setSpanContext(api.context.active(), spanContext), fn);
}

/** How a traced job attempt ended, as its span reports it. */
export interface EmailJobSpanResult {
  outcome: string;
  messageId?: number;
}

/**
 * Runs one attempt of a queued email job in an `email.job` span, a child of the active context (the
 * queuing request's, once `runInEmailTraceContext` restored it). Attributes: queue name, job id,
 * attempt, idempotency key, outcome and message id; nothing from the email itself. Runs `fn` as is when
 * OpenTelemetry is off.
 * @internal
 */
export async function runInEmailJobSpan<T extends { id?: unknown }>(
  job: { queueName: string; jobId: string; attempt: number; idempotencyKey: string },
  outcomeOf: (err: unknown) => string,
  fn: () => Promise<T>,
): Promise<T> {
  const api = loadedOtelApi();
  if (!api) return fn();
  const tracer = api.trace.getTracer(INSTRUMENTATION_SCOPE);
  const span = tracer.startSpan(
    'email.job',
    {
      kind: api.SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'bullmq',
        'messaging.destination.name': job.queueName,
        'messaging.message.id': job.jobId,
        'email.job.attempt': job.attempt,
        [ATTR.idempotencyKey]: job.idempotencyKey,
      },
    },
    api.context.active(),
  );
  try {
    const result = await api.context.with(api.trace.setSpan(api.context.active(), span), fn);
    span.setAttribute(ATTR.outcome, 'sent');
    if (typeof result?.id === 'number') span.setAttribute(ATTR.messageId, result.id);
    return result;
  } catch (err) {
    span.setAttribute(ATTR.outcome, outcomeOf(err));
    span.setAttribute(ATTR.errorType, err instanceof Error ? err.name : 'Error');
    span.setStatus({ code: api.SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}
