import { context, metrics, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/** An OpenTelemetry SDK registered globally, exporting to memory. Register before the app starts. */
export interface MemoryOtel {
  spans(): ReadableSpan[];
  /** Data points of one metric, after a flush. */
  points(name: string): Promise<DataPoint<unknown>[]>;
  reset(): void;
  shutdown(): Promise<void>;
}

/** A meter provider registered globally, exporting to memory (no tracer provider). */
export interface MemoryMeter {
  /** Data points of one metric, after a flush. */
  points(name: string): Promise<DataPoint<unknown>[]>;
  shutdown(): Promise<void>;
}

export function registerMemoryMeter(): MemoryMeter {
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    async points(name) {
      metricExporter.reset();
      await reader.forceFlush();
      const all = metricExporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
      return all
        .filter((m) => m.descriptor.name === name)
        .flatMap((m) => m.dataPoints as DataPoint<unknown>[]);
    },
    async shutdown() {
      await meterProvider.shutdown();
      metrics.disable();
    },
  };
}

export function registerMemoryOtel(): MemoryOtel {
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(tracerProvider);
  const meter = registerMemoryMeter();
  return {
    spans: () => spanExporter.getFinishedSpans(),
    points: (name) => meter.points(name),
    reset: () => spanExporter.reset(),
    async shutdown() {
      await tracerProvider.shutdown();
      await meter.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

/** Every attribute value a span and its events carry, as text. */
export function attributeTexts(span: ReadableSpan): string[] {
  const all: Attributes[] = [span.attributes, ...span.events.map((e) => e.attributes ?? {})];
  return all.flatMap((a) => Object.values(a).map((v) => JSON.stringify(v)));
}
