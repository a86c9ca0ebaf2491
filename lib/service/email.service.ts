import { Inject, Injectable, Optional } from '@nestjs/common';
import { inspect } from 'node:util';
import type { DeliveryObserver } from '../delivery/delivery.observer.js';
import { sentCriteria } from '../delivery/find-sent.matcher.js';
import { generateIdempotencyKey, isValidIdempotencyKey } from '../delivery/idempotency-key.rules.js';
import { RetryEngine } from '../delivery/retry.engine.js';
import { SendExecutor } from '../delivery/send.executor.js';
import { lookUpSent } from '../delivery/sent.lookup.js';
import { validateBatchItems, validateEmailInput } from '../dto/email-input.validator.js';
import {
  EMAIL_API_CLIENT,
  EMAIL_DELIVERY_OBSERVER,
  EMAIL_RESOLVED_OPTIONS,
} from '../config/email.constants.js';
import { EmailValidationError, type EmailValidationIssue } from '../errors/email-validation.error.js';
import type { ApiCall, CallContext, EmailApiClient } from '../http/email-api.client.js';
import type {
  CallOptions,
  FindSentOptions,
  ListOptions,
  SendOptions,
} from '../interfaces/call-options.interface.js';
import type { BatchEmailItem, EmailInput } from '../interfaces/email-input.interface.js';
import type { ResolvedEmailOptions } from '../interfaces/email-module-options.interface.js';
import type { EmailDetail, EmailEvent, EmailLog } from '../interfaces/email-records.interface.js';
import {
  parseArray,
  parseBatchResponse,
  parseEmailDetail,
  parseEmailEvent,
  parseEmailLog,
} from '../records/email-record.parser.js';
import { EMAIL_TELEMETRY } from '../telemetry/email-telemetry.constants.js';
import type { EmailTelemetry } from '../telemetry/email.telemetry.js';
import { bindTelemetry, Traced } from '../telemetry/traced.decorator.js';
import { batchSpan, idSpan } from '../telemetry/traced-args.util.js';

/** A value as an error message shows it: strings quoted, so `"5"` and `5` differ. */
function describeValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

const parseLogs = (json: unknown): EmailLog[] => parseArray(json, parseEmailLog);
const parseEvents = (json: unknown): EmailEvent[] => parseArray(json, parseEmailEvent);

/** What `findSent` needs of an input: a sender, recipients and, inline, a subject. */
function lookupIssues(input: BatchEmailItem): EmailValidationIssue[] {
  if (typeof input !== 'object' || input === null) {
    return [{ path: '', message: 'must be an email input object' }];
  }
  const issues: EmailValidationIssue[] = [];
  if (typeof input.from !== 'string' || input.from.trim() === '') {
    issues.push({ path: 'from', message: 'is required (or set defaultFrom)' });
  }
  if (!Array.isArray(input.to) || input.to.length === 0 || !input.to.every((t) => typeof t === 'string')) {
    issues.push({ path: 'to', message: 'must be a non-empty array of addresses' });
  }
  const templated = input.templateId !== undefined && input.templateId !== null;
  if (!templated && typeof input.subject !== 'string') {
    issues.push({ path: 'subject', message: 'is required unless templateId is set' });
  }
  return issues;
}

/**
 * Sends email and reads message records through the service. Inject it anywhere once
 * `EmailModule` is imported.
 *
 * @example
 * constructor(private readonly email: EmailService) {}
 * await this.email.send({ to: ['ada@example.com'], subject: 'Hi', text: 'Hello' });
 */
@Injectable()
export class EmailService {
  private readonly engine: RetryEngine;
  private readonly sender: SendExecutor;

  constructor(
    @Inject(EMAIL_RESOLVED_OPTIONS) private readonly options: ResolvedEmailOptions,
    @Inject(EMAIL_API_CLIENT) api: EmailApiClient,
    @Inject(EMAIL_DELIVERY_OBSERVER) observer: DeliveryObserver,
    @Optional() @Inject(EMAIL_TELEMETRY) telemetry?: EmailTelemetry | null,
  ) {
    bindTelemetry(this, telemetry);
    this.engine = new RetryEngine(api, observer);
    this.sender = new SendExecutor(this.engine, options.reconcile);
  }

  /**
   * Sends one email. The input is checked against every rule of the contract first; the request
   * carries an `Idempotency-Key` (yours, or one made for this call with `idempotency: 'auto'`) and
   * every retry reuses that key with the byte-identical body. When an attempt may have created the
   * message, it is looked up in the message log before any retry (`reconcile`).
   * @returns the message record; its `status` says whether it was sent or scheduled.
   * @throws EmailSendUncertainError when the outcome is still unknown at the end: retry only with
   * its `idempotencyKey` and the same input, or look the message up later with `findSent`.
   */
  @Traced('send')
  async send(input: EmailInput, maybeOptions?: SendOptions | null): Promise<EmailLog> {
    const options = maybeOptions ?? {};
    const issues: EmailValidationIssue[] = [];
    const key = this.idempotencyKeyFor(options, issues);
    const prepared = this.withDefaultFrom(input);
    issues.push(...validateEmailInput(prepared));
    const ctx = this.context(options, issues);
    if (issues.length > 0) throw new EmailValidationError(issues);
    const call: ApiCall<EmailLog> = {
      method: 'POST',
      path: '/emails',
      body: JSON.stringify(prepared),
      idempotencyKey: key,
      parse: parseEmailLog,
    };
    return this.sender.send({ call, ctx, input: prepared, maxRetries: this.retries(options) });
  }

  /**
   * Sends 1 to 100 emails in one request. Batches have no idempotency and no attachments or scheduling.
   * A batch is retried only when nothing can have been accepted (connection refused, 429).
   * @throws EmailBatchUncertainError when the request may have been processed: it is never retried;
   * look its `items` up with `findSent` before sending any of them again.
   */
  @Traced('sendBatch', batchSpan)
  async sendBatch(items: BatchEmailItem[], maybeOptions?: CallOptions | null): Promise<EmailLog[]> {
    const options = maybeOptions ?? {};
    const prepared = Array.isArray(items) ? items.map((item) => this.withDefaultFrom(item)) : items;
    const issues = validateBatchItems(prepared);
    const ctx = this.context(options, issues);
    if (issues.length > 0) throw new EmailValidationError(issues);
    const call: ApiCall<EmailLog[]> = {
      method: 'POST',
      path: '/emails/batch',
      body: JSON.stringify(prepared),
      parse: parseBatchResponse,
    };
    return this.engine.batch(call, ctx, this.retries(options), prepared);
  }

  /** Lists message records (at most `limit`, 1 to 100; the service's default is 50). */
  @Traced('list')
  async list(maybeOptions?: ListOptions | null): Promise<EmailLog[]> {
    const options = maybeOptions ?? {};
    const issues: EmailValidationIssue[] = [];
    const { limit } = options;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100)) {
      issues.push({
        path: 'limit',
        message: `must be an integer from 1 to 100 (got ${describeValue(limit)})`,
      });
    }
    const ctx = this.context(options, issues);
    if (issues.length > 0) throw new EmailValidationError(issues);
    const path = limit === undefined ? '/emails' : `/emails?limit=${limit}`;
    return this.engine.read({ method: 'GET', path, parse: parseLogs }, ctx, this.retries(options));
  }

  /** Reads one message record with its html and text bodies. */
  @Traced('get', idSpan)
  async get(id: number, maybeOptions?: CallOptions | null): Promise<EmailDetail> {
    const options = maybeOptions ?? {};
    const ctx = this.checked(id, options);
    const call = { method: 'GET', path: `/emails/${id}`, parse: parseEmailDetail } as const;
    return this.engine.read(call, ctx, this.retries(options));
  }

  /** Lists the open and click events of a message, newest first. */
  @Traced('listEvents', idSpan)
  async listEvents(id: number, maybeOptions?: CallOptions | null): Promise<EmailEvent[]> {
    const options = maybeOptions ?? {};
    const ctx = this.checked(id, options);
    const call = { method: 'GET', path: `/emails/${id}/events`, parse: parseEvents } as const;
    return this.engine.read(call, ctx, this.retries(options));
  }

  /**
   * Looks a send up in the message log: among the (at most 100) records `GET /emails` returns, the
   * earliest created at or after `since` (less 2 s of clock skew) with the same sender and recipients
   * (addresses compared without case or display name) and, for an inline email, the same subject.
   * A template email matches on sender, recipients and time only (its rendered subject is not known).
   * Use it after `EmailSendUncertainError` or `EmailBatchUncertainError`.
   * @returns the record, or null when none matches (which proves nothing on a busy account).
   * @example
   * const since = new Date();
   * try { await email.send(input); } catch (e) {
   *   if (e instanceof EmailSendUncertainError) await email.findSent(input, { since });
   * }
   */
  @Traced('findSent')
  async findSent(input: EmailInput | BatchEmailItem, options: FindSentOptions): Promise<EmailLog | null> {
    const issues: EmailValidationIssue[] = [];
    const since = (options as Partial<FindSentOptions> | undefined)?.since;
    if (!(since instanceof Date) || Number.isNaN(since.getTime())) {
      issues.push({ path: 'since', message: 'must be a valid Date' });
    }
    const prepared = this.withDefaultFrom(input);
    issues.push(...lookupIssues(prepared));
    const ctx = this.context(options ?? {}, issues);
    if (issues.length > 0) throw new EmailValidationError(issues);
    return lookUpSent(this.engine, sentCriteria(prepared, since as Date), ctx, this.retries(options));
  }

  private retries(options: CallOptions): number {
    return options.maxRetries ?? this.options.maxRetries;
  }

  private checked(id: number, options: CallOptions): CallContext {
    const issues: EmailValidationIssue[] = [];
    if (!Number.isSafeInteger(id))
      issues.push({ path: 'id', message: `must be an integer (got ${describeValue(id)})` });
    const ctx = this.context(options, issues);
    if (issues.length > 0) throw new EmailValidationError(issues);
    return ctx;
  }

  private withDefaultFrom<T extends BatchEmailItem>(input: T): T {
    const from = this.options.defaultFrom;
    if (from === undefined || typeof input !== 'object' || input === null || input.from !== undefined)
      return input;
    return { ...input, from };
  }

  private idempotencyKeyFor(options: SendOptions, issues: EmailValidationIssue[]): string | undefined {
    const given = options.idempotencyKey;
    if (given === undefined)
      return this.options.idempotency === 'auto' ? generateIdempotencyKey() : undefined;
    if (!isValidIdempotencyKey(given)) {
      issues.push({
        path: 'idempotencyKey',
        message: 'must be 16 to 128 characters of letters, digits, underscore, colon or hyphen',
      });
    }
    return given;
  }

  private context(options: CallOptions, issues: EmailValidationIssue[]): CallContext {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    if (!(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      issues.push({
        path: 'timeoutMs',
        message: `must be a positive number (got ${describeValue(timeoutMs)})`,
      });
    }
    const { maxRetries } = options;
    if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0)) {
      issues.push({
        path: 'maxRetries',
        message: `must be an integer of 0 or more (got ${describeValue(maxRetries)})`,
      });
    }
    return { deadline: Date.now() + timeoutMs, timeoutMs, signal: options.signal };
  }

  toJSON(): Record<string, unknown> {
    return { baseUrl: this.options.baseUrl.href };
  }

  [inspect.custom](): string {
    return `EmailService { baseUrl: '${this.options.baseUrl.href}' }`;
  }
}
