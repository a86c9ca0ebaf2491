import { useScriptedEmailApp } from '../support/email-app.js';
import { input, script } from '../delivery/delivery.support.js';
import { registerMemoryMeter, type MemoryMeter } from './otel.support.js';

// A span that does not record must not switch the metrics off: here only a meter provider is
// registered (no tracer provider), so every span is a no-op one and the counters must still count.
describe('OpenTelemetry metrics without a tracer provider', () => {
  let meter: MemoryMeter;
  beforeAll(() => {
    meter = registerMemoryMeter();
  });
  afterAll(() => meter.shutdown());
  const app = useScriptedEmailApp({ timeoutMs: 5000 }); // after the hooks above: the meter exists first
  const points = (name: string) => meter.points(name);

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
    // the 503 may have created the message: the retry with the same key settles it, no look-up
    expect(counted).toEqual({ 'send failed': 1, 'send ok': 2 });
    const durations = await points('email.client.operation.duration');
    expect(durations.map((p) => (p.value as { count: number }).count)).toEqual([2]);
  });
});
