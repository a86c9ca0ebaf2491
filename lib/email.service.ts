import { Inject, Injectable } from '@nestjs/common';
import { inspect } from 'node:util';
import { generateIdempotencyKey, isValidIdempotencyKey } from './delivery/idempotency-key.js';
import { validateBatchItems, validateEmailInput } from './dto/email-input.validator.js';
import { EMAIL_API_CLIENT, EMAIL_RESOLVED_OPTIONS } from './email.constants.js';
import { EmailValidationError, type EmailValidationIssue } from './errors/email-validation.error.js';
import type { ApiCall, CallContext, EmailApiClient } from './http/email-api.client.js';
import type { CallOptions, ListOptions, SendOptions } from './interfaces/call-options.interface.js';
import type { BatchEmailItem, EmailInput } from './interfaces/email-input.interface.js';
import type { ResolvedEmailOptions } from './interfaces/email-module-options.interface.js';
import type { EmailDetail, EmailEvent, EmailLog } from './interfaces/email-records.interface.js';
import {
  parseArray,
  parseBatchResponse,
  parseEmailDetail,
  parseEmailEvent,
  parseEmailLog,
} from './records/email-record.parser.js';

const parseLogs = (json: unknown): EmailLog[] => parseArray(json, parseEmailLog);
const parseEvents = (json: unknown): EmailEvent[] => parseArray(json, parseEmailEvent);

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
  constructor(
    @Inject(EMAIL_RESOLVED_OPTIONS) private readonly options: ResolvedEmailOptions,
    @Inject(EMAIL_API_CLIENT) private readonly api: EmailApiClient,
  ) {}

  /**
   * Sends one email. The input is checked against every rule of the contract first; the request
   * carries an `Idempotency-Key` (yours, or one made for this call with `idempotency: 'auto'`).
   * @returns the message record; its `status` says whether it was sent or scheduled.
   */
  async send(input: EmailInput, options: SendOptions = {}): Promise<EmailLog> {
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
    return this.api.attempt(call, ctx);
  }

  /** Sends 1 to 100 emails in one request. Batches have no idempotency and no attachments or scheduling. */
  async sendBatch(items: BatchEmailItem[], options: CallOptions = {}): Promise<EmailLog[]> {
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
    return this.api.attempt(call, ctx);
  }

  /** Lists message records (at most `limit`, 1 to 100; the service's default is 50). */
  async list(options: ListOptions = {}): Promise<EmailLog[]> {
    const issues: EmailValidationIssue[] = [];
    const { limit } = options;
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 100)) {
      issues.push({ path: 'limit', message: `must be an integer from 1 to 100 (got ${String(limit)})` });
    }
    const ctx = this.context(options, issues);
    if (issues.length > 0) throw new EmailValidationError(issues);
    const path = limit === undefined ? '/emails' : `/emails?limit=${limit}`;
    return this.api.attempt({ method: 'GET', path, parse: parseLogs }, ctx);
  }

  /** Reads one message record with its html and text bodies. */
  async get(id: number, options: CallOptions = {}): Promise<EmailDetail> {
    const ctx = this.checked(id, options);
    return this.api.attempt({ method: 'GET', path: `/emails/${id}`, parse: parseEmailDetail }, ctx);
  }

  /** Lists the open and click events of a message, newest first. */
  async listEvents(id: number, options: CallOptions = {}): Promise<EmailEvent[]> {
    const ctx = this.checked(id, options);
    return this.api.attempt({ method: 'GET', path: `/emails/${id}/events`, parse: parseEvents }, ctx);
  }

  private checked(id: number, options: CallOptions): CallContext {
    const issues: EmailValidationIssue[] = [];
    if (!Number.isSafeInteger(id)) issues.push({ path: 'id', message: `must be an integer (got ${String(id)})` });
    const ctx = this.context(options, issues);
    if (issues.length > 0) throw new EmailValidationError(issues);
    return ctx;
  }

  private withDefaultFrom<T extends BatchEmailItem>(input: T): T {
    const from = this.options.defaultFrom;
    if (from === undefined || typeof input !== 'object' || input === null || input.from !== undefined) return input;
    return { ...input, from };
  }

  private idempotencyKeyFor(options: SendOptions, issues: EmailValidationIssue[]): string | undefined {
    const given = options.idempotencyKey;
    if (given === undefined) return this.options.idempotency === 'auto' ? generateIdempotencyKey() : undefined;
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
      issues.push({ path: 'timeoutMs', message: `must be a positive number (got ${String(timeoutMs)})` });
    }
    const { maxRetries } = options;
    if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0)) {
      issues.push({ path: 'maxRetries', message: `must be an integer of 0 or more (got ${String(maxRetries)})` });
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
