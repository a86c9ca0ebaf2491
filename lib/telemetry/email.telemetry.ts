import { AsyncLocalStorage } from 'node:async_hooks';
import { EmailApiError } from '../errors/email-api.error.js';
import { EmailBatchUncertainError } from '../errors/email-batch-uncertain.error.js';
import { EmailSendUncertainError } from '../errors/email-send-uncertain.error.js';
import { EmailUnexpectedResponseError } from '../errors/email-transport.error.js';
import { EmailValidationError } from '../errors/email-validation.error.js';
import { EmailError } from '../errors/email.error.js';
import {
  ATTR,
  EVENT,
  INSTRUMENTATION_SCOPE,
  METRIC,
  type EmailOperation,
} from './email-telemetry.constants.js';
import type {
  OtelApiModule,
  OtelAttributes as Attributes,
  OtelContext,
  OtelCounter as Counter,
  OtelHistogram as Histogram,
  OtelSpan as Span,
  OtelTracer as Tracer,
  OtelTracerProvider,
} from '../interfaces/otel-api.interface.js';
import { loadOtelApi } from '../peers/optional-peer.loader.js';
import {
  DeliveryObserver,
  type AttemptEvent,
  type ObservedCall,
  type OperationEvent,
  type ReconcileEvent,
  type SuppressedEvent,
} from './delivery.telemetry.js';

/** One operation in progress: its span and what the loop told about it so far. */
interface OperationScope {
  operation: EmailOperation;
  span: Span;
  /** The operation's own request; other calls (reconcile look-ups) are reported as theirs. */
  primary?: ObservedCall;
  attempts: number;
  status?: number;
  reconciled: boolean;
  /** The account id, only with `telemetry: { accountAttribute: true }`. */
  account?: string;
}

/** How an operation ended, as the `email.outcome` attribute says it. */
export type TracedOutcome = 'sent' | 'ok' | 'not-sent' | 'uncertain' | 'invalid' | 'failed';

const statusOf = (err: unknown): number | undefined => {
  if (err instanceof EmailApiError || err instanceof EmailUnexpectedResponseError) return err.status;
  if (err instanceof EmailSendUncertainError || err instanceof EmailBatchUncertainError)
    return statusOf(err.cause);
  return undefined;
};

const errorType = (err: unknown): string => (err instanceof Error ? err.name : 'Error');

function outcomeOf(err: unknown): TracedOutcome {
  if (err instanceof EmailValidationError) return 'invalid';
  if (err instanceof EmailSendUncertainError || err instanceof EmailBatchUncertainError) return 'uncertain';
  if (err instanceof EmailError && err.outcome !== undefined) return err.outcome;
  return 'failed';
}

/** Whether `counter` is one of the API's no-op instruments (what a meter gives when no SDK is registered). */
function isNoopCounter(api: OtelApiModule, counter: Counter): boolean {
  const noop = api.createNoopMeter?.().createCounter('noop');
  return noop !== undefined && Object.getPrototypeOf(counter) === Object.getPrototypeOf(noop);
}

const isSend = (op: EmailOperation): boolean => op === 'send' || op === 'sendBatch';

/** The operation a request belongs to, told from the request alone (a `findSent` look-up counts as `list`). */
function operationOf(call: ObservedCall): EmailOperation {
  const path = call.path.split('?')[0];
  if (call.method === 'POST') return path === '/emails/batch' ? 'sendBatch' : 'send';
  if (path.endsWith('/events')) return 'listEvents';
  return path === '/emails' ? 'list' : 'get';
}

/** Attributes of the attempts counter. */
function attemptMetric(operation: EmailOperation, error: unknown): Attributes {
  const metric: Attributes = { [ATTR.operation]: operation, [ATTR.outcome]: error ? 'failed' : 'ok' };
  if (error !== undefined) metric[ATTR.errorType] = errorType(error);
  return metric;
}

/**
 * Spans and metrics of one module instance, through `@opentelemetry/api`: the `DeliveryObserver` whose
 * `operation` hook runs each operation of `EmailService` in a span started in the caller's active
 * context, and whose `attempt` and `reconcile` events add the loop's attempts and reconcile look-ups to
 * the span of the operation they belong to. Attributes carry the operation, statuses, attempt counts,
 * outcomes, message ids and idempotency keys only: never the API key, an address, a subject or a body
 * (error messages are not recorded either, as a validation message may quote an address).
 */
export class EmailTelemetry extends DeliveryObserver {
  private readonly scopes = new AsyncLocalStorage<OperationScope>();
  /** The provider `tracer` comes from (the API's global proxy), and the API's no-op provider when known. */
  private readonly provider: OtelTracerProvider;
  private readonly noopProvider: unknown;
  private readonly tracer: Tracer;
  private readonly sends: Counter;
  private readonly attemptCount: Counter;
  private readonly uncertain: Counter;
  private readonly suppressedCount: Counter;
  private readonly duration: Histogram;
  /**
   * Whether a meter provider was registered when this instance was made. Without one, the API hands out
   * no-op instruments for good, and nothing is measured or built for them.
   */
  private readonly metered: boolean;

  constructor(
    private readonly api: OtelApiModule,
    version: string,
  ) {
    super();
    this.provider = api.trace.getTracerProvider();
    this.tracer = this.provider.getTracer(INSTRUMENTATION_SCOPE, version);
    this.noopProvider =
      typeof this.provider.getDelegate === 'function' && api.ProxyTracerProvider !== undefined
        ? new api.ProxyTracerProvider().getDelegate()
        : undefined;
    const meter = api.metrics.getMeter(INSTRUMENTATION_SCOPE, version);
    this.sends = meter.createCounter(METRIC.sends, {
      description: 'Messages sent or attempted, by outcome',
      unit: '{message}',
    });
    this.attemptCount = meter.createCounter(METRIC.attempts, {
      description: 'HTTP attempts made to the service, reconcile look-ups included',
      unit: '{attempt}',
    });
    this.uncertain = meter.createCounter(METRIC.uncertain, {
      description: 'Sends that ended without a known outcome',
      unit: '{call}',
    });
    this.suppressedCount = meter.createCounter(METRIC.suppressed, {
      description: 'Recipients the suppression list refused before any request, by reason',
      unit: '{recipient}',
    });
    this.duration = meter.createHistogram(METRIC.duration, {
      description: 'Duration of EmailService calls, retries and reconciliation included',
      unit: 's',
    });
    this.metered = !isNoopCounter(api, this.sends);
  }

  /**
   * Runs one operation of `EmailService` in a span that is a child of the caller's active context (the
   * `DeliveryObserver` hook). When the span does not record (no SDK, or sampled out) and no meter
   * provider is registered, `run` just runs. Start attributes: the operation, and the message id or
   * the batch size (never an address, subject or body).
   */
  override operation<T>(event: OperationEvent, run: () => Promise<T>): Promise<T> {
    // Nothing records and nothing meters: no span, no attributes, no context read (the span `tracer`
    // would start is the API's no-op one, whose only use here is to answer `isRecording()` with false).
    if (!this.watching()) return run();
    const { api } = this;
    const { operation, messageId, batchSize, account } = event;
    const parent = api.context.active();
    const start: Attributes = { [ATTR.operation]: operation };
    if (account !== undefined) start[ATTR.account] = account; // present only when the app asked for it
    if (messageId !== undefined && Number.isSafeInteger(messageId)) start[ATTR.messageId] = messageId;
    if (batchSize !== undefined) start[ATTR.batchSize] = batchSize;
    const span = this.tracer.startSpan(
      `email.${operation}`,
      { kind: api.SpanKind.CLIENT, attributes: start },
      parent,
    );
    if (!this.metered && !span.isRecording()) return run();
    return this.observe(parent, span, operation, batchSize ?? 1, run, account);
  }

  /** Something records or meters: without either, every hook of this observer is a no-op. */
  override watching(): boolean {
    return this.metered || !this.tracesNothing();
  }

  /**
   * Whether `tracer` can only start no-op spans: its provider (the API's proxy) has no SDK provider to
   * delegate to. Asked per operation, so an SDK registered after boot is seen at once.
   */
  private tracesNothing(): boolean {
    return this.noopProvider !== undefined && this.provider.getDelegate!() === this.noopProvider;
  }

  private async observe<T>(
    parent: OtelContext,
    span: Span,
    operation: EmailOperation,
    size: number,
    fn: () => Promise<T>,
    account?: string,
  ): Promise<T> {
    const { api } = this;
    const scope: OperationScope = { operation, span, attempts: 0, reconciled: false, account };
    const started = performance.now();
    try {
      // A span that records (an SDK is registered) gets the loop's events through an AsyncLocalStorage
      // scope. Without one, no scope is entered: an AsyncLocalStorage turns on promise hooks for the
      // whole process, which would tax every send of an app that traces nothing (attempts are then
      // counted by `attempt` from the call alone).
      const result = span.isRecording()
        ? await this.scopes.run(scope, () => api.context.with(api.trace.setSpan(parent, span), fn))
        : await fn();
      this.finish(scope, started, size, isSend(operation) ? 'sent' : 'ok', result);
      return result;
    } catch (err) {
      this.finish(scope, started, size, outcomeOf(err), undefined, err);
      throw err;
    }
  }

  /** One attempt of a request of the current operation (the `DeliveryObserver` event). */
  attempt(event: AttemptEvent): void {
    const scope = this.scopes.getStore();
    const { call, attempt, error, retryDelayMs } = event;
    if (scope === undefined) {
      if (this.metered) this.attemptCount.add(1, attemptMetric(operationOf(call), error));
      return;
    }
    scope.primary ??= call;
    const status = error === undefined ? (call.method === 'POST' ? 201 : 200) : statusOf(error);
    const attributes: Attributes = {
      [ATTR.attempt]: attempt,
      [ATTR.method]: call.method,
      [ATTR.path]: call.path.split('?')[0],
    };
    if (status !== undefined) attributes[ATTR.status] = status;
    if (error !== undefined) attributes[ATTR.errorType] = errorType(error);
    if (retryDelayMs !== undefined) attributes[ATTR.retryDelayMs] = retryDelayMs;
    scope.span.addEvent(EVENT.attempt, attributes);
    if (call === scope.primary) {
      scope.attempts = attempt;
      scope.status = status;
      if (call.idempotencyKey !== undefined)
        scope.span.setAttribute(ATTR.idempotencyKey, call.idempotencyKey);
    }
    this.attemptCount.add(1, attemptMetric(scope.operation, error));
  }

  /** A reconcile look-up of the current send (the `DeliveryObserver` event). */
  reconcile(event: ReconcileEvent): void {
    const scope = this.scopes.getStore();
    if (scope === undefined) return;
    const attributes: Attributes = { [ATTR.reconcileResult]: event.result };
    if (event.messageId !== undefined) attributes[ATTR.messageId] = event.messageId;
    if (event.error !== undefined) attributes[ATTR.errorType] = errorType(event.error);
    scope.span.addEvent(EVENT.reconcile, attributes);
    if (event.result === 'found') scope.reconciled = true;
  }

  /** The end of a call: the operation's span ends in `operation`, which knows the result. */
  outcome(): void {}

  /** Recipients the suppression list refused: counted by reason and operation (never an address). */
  override suppressed({ operation, reasons }: SuppressedEvent): void {
    if (!this.metered) return;
    for (const [reason, n] of Object.entries(reasons)) {
      if (n) this.suppressedCount.add(n, { [ATTR.operation]: operation, [ATTR.suppressionReason]: reason });
    }
  }

  private finish(
    scope: OperationScope,
    started: number,
    size: number,
    outcome: TracedOutcome,
    result: unknown,
    err?: unknown,
  ): void {
    const { span, operation } = scope;
    if (span.isRecording()) this.describeSpan(scope, outcome, result, err);
    const metric: Attributes = { [ATTR.operation]: operation, [ATTR.outcome]: outcome };
    if (err !== undefined) metric[ATTR.errorType] = errorType(err);
    const who: Attributes = scope.account === undefined ? {} : { [ATTR.account]: scope.account };
    this.duration.record((performance.now() - started) / 1000, { ...metric, ...who });
    if (isSend(operation)) {
      this.sends.add(size, { [ATTR.operation]: operation, [ATTR.outcome]: outcome, ...who });
      if (outcome === 'uncertain') this.uncertain.add(1, { [ATTR.operation]: operation, ...who });
    }
    span.end();
  }

  /** The attributes and status that end a recording span (a no-op span is not told them). */
  private describeSpan(scope: OperationScope, outcome: TracedOutcome, result: unknown, err?: unknown): void {
    const { span, operation } = scope;
    span.setAttribute(ATTR.outcome, outcome);
    span.setAttribute(ATTR.attempts, scope.attempts);
    if (scope.status !== undefined) span.setAttribute(ATTR.status, scope.status);
    if (scope.reconciled) span.setAttribute(ATTR.reconciled, true);
    const record = result as { id?: unknown; status?: unknown } | undefined;
    if (operation === 'send' && record && typeof record.id === 'number') {
      span.setAttribute(ATTR.messageId, record.id);
      if (typeof record.status === 'string') span.setAttribute(ATTR.messageStatus, record.status);
    }
    if (err instanceof EmailSendUncertainError) span.setAttribute(ATTR.idempotencyKey, err.idempotencyKey);
    if (err !== undefined) {
      span.setAttribute(ATTR.errorType, errorType(err));
      span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: errorType(err) });
    }
  }
}

/**
 * The telemetry of one module instance: null when `enabled` is false or `@opentelemetry/api` is not
 * installed (then nothing is traced and nothing is imported). With the API installed but no SDK
 * registered, the API's own no-op tracer and meter are used.
 */
export async function createEmailTelemetry(
  enabled: boolean,
  version: string,
): Promise<EmailTelemetry | null> {
  if (!enabled) return null;
  const api = await loadOtelApi();
  return api === null ? null : new EmailTelemetry(api, version);
}
