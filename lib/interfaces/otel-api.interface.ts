// The parts of `@opentelemetry/api` this folder uses, declared here so that our published types never
// name `@opentelemetry/api` (an optional peer an app may not have installed). The real module fits them.

/** Attribute values we set: numbers, strings and booleans only. */
export type OtelAttributes = Record<string, string | number | boolean>;

/** An OpenTelemetry context (immutable; we only pass it on). */
export interface OtelContext {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): OtelContext;
  deleteValue(key: symbol): OtelContext;
}

/** A span context (ids and flags), as `span.spanContext()` gives it. */
export interface OtelSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: { serialize(): string };
}

/** A span, as far as we record into it. */
export interface OtelSpan {
  setAttribute(key: string, value: string | number | boolean): unknown;
  addEvent(name: string, attributes?: OtelAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  spanContext(): OtelSpanContext;
  /** False for the API's no-op span (no SDK registered, or the trace not sampled). */
  isRecording(): boolean;
  end(): void;
}

/** A tracer. */
export interface OtelTracer {
  startSpan(
    name: string,
    options: { kind: number; attributes: OtelAttributes },
    context: OtelContext,
  ): OtelSpan;
}

/** A counter or histogram. */
export interface OtelCounter {
  add(value: number, attributes?: OtelAttributes): void;
}
export interface OtelHistogram {
  record(value: number, attributes?: OtelAttributes): void;
}

interface OtelInstrumentOptions {
  description: string;
  unit: string;
}

/**
 * A tracer provider. The API's global one is a `ProxyTracerProvider`, whose `getDelegate()` is the
 * registered SDK's provider, or the API's no-op provider while none is registered.
 */
export interface OtelTracerProvider {
  getTracer(name: string, version?: string): OtelTracer;
  getDelegate?(): unknown;
}

/** The `@opentelemetry/api` module as we use it. */
export interface OtelApiModule {
  trace: {
    getTracer(name: string, version?: string): OtelTracer;
    getTracerProvider(): OtelTracerProvider;
    getActiveSpan(): OtelSpan | undefined;
    setSpan(context: OtelContext, span: OtelSpan): OtelContext;
    setSpanContext(context: OtelContext, spanContext: OtelSpanContext): OtelContext;
  };
  metrics: {
    getMeter(
      name: string,
      version?: string,
    ): {
      createCounter(name: string, options: OtelInstrumentOptions): OtelCounter;
      createHistogram(name: string, options: OtelInstrumentOptions): OtelHistogram;
    };
  };
  context: {
    active(): OtelContext;
    with<T>(context: OtelContext, fn: () => T): T;
  };
  SpanKind: { CLIENT: number; CONSUMER: number };
  /** A fresh one delegates to the API's no-op provider: tells "no SDK registered" apart. */
  ProxyTracerProvider?: new () => { getDelegate(): unknown };
  SpanStatusCode: { ERROR: number };
  isSpanContextValid(spanContext: OtelSpanContext): boolean;
  /** The API's own no-op meter (API >= 1.3): tells its instruments from an SDK's. */
  createNoopMeter?(): { createCounter(name: string): OtelCounter };
  createTraceState(raw: string): { serialize(): string };
}
