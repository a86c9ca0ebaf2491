import { loadedOtelApi } from './otel-api.loader.js';

/** A trace context to carry in job data: W3C `traceparent` (and `tracestate`), plain JSON.
 * @publicApi
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
 * @publicApi
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
 * @publicApi
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
