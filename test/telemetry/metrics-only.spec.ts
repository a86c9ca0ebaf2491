import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
} from '@opentelemetry/sdk-metrics';
import { useScriptedEmailApp } from '../support/email-app.js';
import { input, script } from '../delivery/delivery.support.js';

// A span that does not record must not switch the metrics off: here only a meter provider is
// registered (no tracer provider), so every span is a no-op one and the counters must still count.
describe('OpenTelemetry metrics without a tracer provider', () => {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  beforeAll(() => {
    metrics.setGlobalMeterProvider(provider);
  });
  afterAll(async () => {
    await provider.shutdown();
    metrics.disable();
  });
  const app = useScriptedEmailApp({ timeoutMs: 5000 }); // after the hooks above: the meter exists first

  async function points(name: string): Promise<DataPoint<unknown>[]> {
    exporter.reset();
    await reader.forceFlush();
    return exporter
      .getMetrics()
      .flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
      .filter((m) => m.descriptor.name === name)
      .flatMap((m) => m.dataPoints as DataPoint<unknown>[]);
  }

  it('sends, attempts and durations are counted', async () => {
    script(app.server, [503, 201, 201]);
    await app.email.send(input, { idempotencyKey: 'metrics-only-key-0001' });
    await app.email.send(input, { idempotencyKey: 'metrics-only-key-0002' });
    const sends = await points('email.client.sends');
    expect(sends.map((p) => [p.attributes['email.outcome'], p.value])).toEqual([['sent', 2]]);
    const attempts = await points('email.client.attempts');
    const counted = Object.fromEntries(
      attempts.map((p) => [`${p.attributes['email.operation']} ${p.attributes['email.outcome']}`, p.value]),
    );
    // the 503 may have created the message: a look-up (counted as a list) comes before the retry
    expect(counted).toEqual({ 'send failed': 1, 'send ok': 2, 'list ok': 1 });
    const durations = await points('email.client.operation.duration');
    expect(durations.map((p) => (p.value as { count: number }).count)).toEqual([2]);
  });
});
