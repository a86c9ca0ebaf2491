import {
  DeliveryObserver,
  type AttemptEvent,
  type OutcomeEvent,
  type ReconcileEvent,
} from '../../lib/telemetry/delivery.telemetry.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import { input, recordFor, script } from './delivery.support.js';

class RecordingObserver implements DeliveryObserver {
  events: Array<['attempt', AttemptEvent] | ['reconcile', ReconcileEvent] | ['outcome', OutcomeEvent]> = [];
  attempt(e: AttemptEvent): void {
    this.events.push(['attempt', e]);
  }
  reconcile(e: ReconcileEvent): void {
    this.events.push(['reconcile', e]);
  }
  outcome(e: OutcomeEvent): void {
    this.events.push(['outcome', e]);
  }
}

describe('delivery observer (provided through DI)', () => {
  const observer = new RecordingObserver();
  const app = useScriptedEmailApp({
    maxRetries: 2,
    overrides: [{ provide: DeliveryObserver, useValue: observer }],
  });

  it('sees each attempt with its status and retry delay, the reconcile look-up and the outcome', async () => {
    script(app.server, [503, 201]);
    await app.email.send(input, { idempotencyKey: 'order-1:confirmation' });
    const summary = () =>
      observer.events.map(([kind, e]) => {
        const call = `${e.call.method} ${e.call.path}`;
        if (kind === 'attempt') {
          const a = e as AttemptEvent;
          const status = a.error === undefined ? 'ok' : (a.error as { status?: number }).status;
          return `${kind} ${call} ${a.attempt}/${a.attempts} ${status} ${a.retryDelayMs === undefined ? '-' : 'delay'}`;
        }
        if (kind === 'reconcile') return `${kind} ${call} ${(e as ReconcileEvent).result}`;
        return `${kind} ${call} ${(e as OutcomeEvent).error === undefined ? 'ok' : 'error'}`;
      });
    expect(observer.events.length).toBeGreaterThan(0);
    expect(summary()).toEqual([
      'attempt POST /emails 1/3 503 delay',
      'attempt POST /emails 2/3 ok -',
      'outcome POST /emails ok',
    ]);
    const first = observer.events[0][1] as AttemptEvent;
    expect(first.call.idempotencyKey).toBe('order-1:confirmation');
    expect(first.retryDelayMs).toBeGreaterThanOrEqual(0);

    // No retry left: the look-up, with the read of the look-alike's content, then the outcome.
    observer.events.length = 0;
    app.server.requests.length = 0;
    script(app.server, [503], () => [recordFor(100)]);
    await app.email.send(input, { idempotencyKey: 'order-1:confirmation', maxRetries: 0 });
    expect(summary()).toEqual([
      'attempt POST /emails 1/1 503 -',
      'attempt GET /emails?limit=100 1/2 ok -',
      'outcome GET /emails?limit=100 ok',
      'attempt GET /emails/100 1/2 ok -',
      'outcome GET /emails/100 ok',
      'reconcile POST /emails found',
      'outcome POST /emails ok',
    ]);
  });
});
