import { SANDBOX_MAX_RECIPIENTS, SANDBOX_MAX_SCHEDULE_AHEAD_MS } from './sandbox.constants.js';
import { checkAttachments } from './sandbox.attachments.js';
import { SandboxHttpError } from './sandbox.http.js';
import { textProblem } from './sandbox.text.js';

/** A send that passed every structural and content rule. */
export interface ValidSend {
  from: string;
  /** Lower-case domain of the sender address. */
  fromDomain: string;
  to: string[];
  subject: string | null;
  html: string | null;
  text: string | null;
  templateId: number | null;
  variables: Record<string, string> | null;
  trackOpens: boolean | null;
  trackClicks: boolean | null;
  /** Epoch ms, or null when not scheduled. */
  scheduledAt: number | null;
}

/** Where a send comes from and what it may carry. */
export interface ValidationContext {
  /** `false` for batch items: scheduledAt and attachments are refused. */
  single: boolean;
  rejectUnknown: boolean;
  now: number;
  /** Prefix of error paths, e.g. `[3].` for a batch item. */
  at?: string;
}

const ITEM_FIELDS = [
  'from',
  'to',
  'subject',
  'html',
  'text',
  'templateId',
  'variables',
  'trackOpens',
  'trackClicks',
];
const BATCH_FIELDS = new Set(ITEM_FIELDS);
const SINGLE_FIELDS = new Set([...ITEM_FIELDS, 'scheduledAt', 'attachments']);
const ADDRESS = /^(?:[^<>]*<\s*([^\s<>@]+@([^\s<>@]+))\s*>|([^\s<>@]+@([^\s<>@]+)))$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;
const HORIZON_MS = SANDBOX_MAX_SCHEDULE_AHEAD_MS;

/** Lower-case domain of `addr` or `Name <addr>`, or null when it is not an address. */
export function addressDomain(value: string): string | null {
  const m = ADDRESS.exec(value.trim());
  return m ? (m[2] ?? m[4]).toLowerCase() : null;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const optional = (v: unknown, type: string): boolean => v === undefined || v === null || typeof v === type;
const filled = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * Checks one send (a POST /emails body or one batch item) the way the service does and returns it
 * normalised; throws a 400 `SandboxHttpError` naming the first broken rule.
 *
 * @example
 * validateSend(body, { single: true, rejectUnknown: true, now: Date.now() });
 */
export function validateSend(body: unknown, ctx: ValidationContext): ValidSend {
  const at = ctx.at ?? '';
  const bad = (message: string) => new SandboxHttpError(400, at + message);
  if (!isObject(body)) throw new SandboxHttpError(400, `${at || 'body '}must be a JSON object`.trim());
  const b = body;
  for (const key in b) {
    if (!ctx.single && (key === 'scheduledAt' || key === 'attachments')) {
      throw bad(`${key} is not supported in batch items`);
    }
    if (ctx.rejectUnknown && !(ctx.single ? SINGLE_FIELDS : BATCH_FIELDS).has(key)) {
      throw bad(`${key} is not a field of this service (it does not support it)`);
    }
  }
  if (!filled(b.from)) throw bad('from must be a non-empty string');
  checkText(b.from, 'from', 'none', bad);
  const fromDomain = addressDomain(b.from);
  if (!fromDomain) throw bad('from must be an email address');
  const to = b.to;
  if (!Array.isArray(to) || to.length < 1 || to.length > SANDBOX_MAX_RECIPIENTS)
    throw bad(`to must hold 1 to ${SANDBOX_MAX_RECIPIENTS} addresses`);
  for (let i = 0; i < to.length; i++) {
    if (typeof to[i] !== 'string' || !addressDomain(to[i])) throw bad(`to[${i}] must be an email address`);
    checkText(to[i], `to[${i}]`, 'none', bad);
  }
  if (b.subject !== undefined && typeof b.subject !== 'string') throw bad('subject must be a string');
  checkText(b.subject, 'subject', 'explicit', bad);
  if (!optional(b.html, 'string')) throw bad('html must be a string or null');
  if (!optional(b.text, 'string')) throw bad('text must be a string or null');
  checkText(b.html, 'html', 'none', bad);
  checkText(b.text, 'text', 'none', bad);
  if (!optional(b.trackOpens, 'boolean')) throw bad('trackOpens must be a boolean or null');
  if (!optional(b.trackClicks, 'boolean')) throw bad('trackClicks must be a boolean or null');
  const templateId = b.templateId ?? null;
  if (templateId !== null && !Number.isSafeInteger(templateId)) throw bad('templateId must be an integer');
  const variables = b.variables ?? null;
  if (variables !== null) {
    if (!isObject(variables)) throw bad('variables must be an object of strings');
    for (const key in variables) {
      if (typeof variables[key] !== 'string') throw bad(`variables.${key} must be a string`);
      checkText(key + variables[key], `variables.${key}`, 'none', bad);
    }
  }
  if (templateId !== null) {
    if (b.subject !== undefined || (b.html ?? null) !== null || (b.text ?? null) !== null) {
      throw bad('subject, html and text must be omitted when templateId is set');
    }
  } else {
    if (variables !== null) throw bad('variables are only valid together with templateId');
    if (!filled(b.subject)) throw bad('subject is required (at least 1 character) unless templateId is set');
    if (!filled(b.html) && !filled(b.text)) throw bad('html or text must be a non-empty string');
  }
  const scheduledAt = ctx.single ? checkScheduledAt(b.scheduledAt, ctx.now, bad) : null;
  if (ctx.single) checkAttachments(b.attachments, ctx.rejectUnknown);
  return {
    from: b.from,
    fromDomain,
    to: to as string[],
    subject: templateId === null ? (b.subject as string) : null,
    html: filled(b.html) ? b.html : null,
    text: filled(b.text) ? b.text : null,
    templateId: templateId as number | null,
    variables: variables as Record<string, string> | null,
    trackOpens: (b.trackOpens ?? null) as boolean | null,
    trackClicks: (b.trackClicks ?? null) as boolean | null,
    scheduledAt,
  };
}

/** Refuses a string field holding a lone surrogate (or, per `bidi`, direction controls). */
function checkText(
  value: unknown,
  path: string,
  bidi: 'none' | 'explicit' | 'all',
  bad: (m: string) => Error,
) {
  const problem = typeof value === 'string' ? textProblem(value, path, bidi) : null;
  if (problem !== null) throw bad(problem);
}

function checkScheduledAt(value: unknown, now: number, bad: (m: string) => Error): number | null {
  if (value === undefined || value === null) return null;
  const ms = typeof value === 'string' && DATE_TIME.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms)) throw bad('scheduledAt must be an ISO 8601 date-time with a time zone');
  if (ms > now + HORIZON_MS) throw bad('scheduledAt may be at most 30 days ahead');
  return ms;
}
