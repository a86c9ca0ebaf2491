import fc from 'fast-check';
import {
  MAX_ATTACHMENT_TOTAL_BYTES,
  MAX_SCHEDULE_AHEAD_MS,
} from '../../lib/validation/validation.constants.js';

type Email = Record<string, unknown>;
export type Mode = 'inline' | 'template';

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
const tld = fc.stringMatching(/^[a-z]{2,6}$/);
const domain = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), tld)
  .map(([l, t]) => [...l, t].join('.'));
const local = fc.stringMatching(/^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]{1,12}(\.[a-zA-Z0-9_+-]{1,8})?$/);

/** A bare address: `local@domain.tld`. */
export const bareAddress = fc.tuple(local, domain).map(([l, d]) => `${l}@${d}`);

const plainName = fc.stringMatching(/^[A-Za-z][A-Za-z .'-]{0,20}$/);
const quotedName = fc
  .string({ unit: fc.constantFrom(...'abc ,;:@<>()[].XYZ\u00e9'.split('')), maxLength: 20 })
  .map((s) => `"${s}"`);

/** An address in any accepted form: bare, `Name <addr>`, `"Quoted, Name" <addr>` or `<addr>`. */
export const address = fc.oneof(
  bareAddress,
  fc
    .tuple(fc.oneof(plainName, quotedName, fc.constant('')), bareAddress)
    .map(([n, a]) => `${n} <${a}>`.trimStart()),
);

const nonEmpty = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !/[\r\n]/.test(s));

/** A valid attachment list: 0 to 5 small files (total far below the cap). */
const attachments = fc.array(
  fc.record(
    {
      filename: fc.string({ minLength: 1, maxLength: 255 }).filter((s) => !/[\r\n]/.test(s)),
      content: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')),
      contentType: fc.constantFrom('text/plain', 'application/pdf', 'image/png'),
    },
    { requiredKeys: ['filename', 'content'] },
  ),
  { maxLength: 5 },
);

/** `scheduledAt` values within the horizon of `nowMs` (a minute of margin at the far end), as Date or string. */
function scheduledAt(nowMs: number) {
  const ms = fc.integer({ min: nowMs - 365 * 86_400_000, max: nowMs + MAX_SCHEDULE_AHEAD_MS - 60_000 });
  return fc.oneof(
    ms.map((t) => new Date(t)),
    ms.map((t) => new Date(t).toISOString()),
    fc.constant(null),
  );
}

const tracking = fc.option(fc.boolean());

/** A valid email in the given mode; single sends may carry scheduledAt and attachments. */
export function validEmail(mode: Mode, single: boolean, nowMs = Date.now()): fc.Arbitrary<Email> {
  const common: Record<string, fc.Arbitrary<unknown>> = {
    from: address,
    to: fc.array(address, { minLength: 1, maxLength: 50 }),
    trackOpens: tracking,
    trackClicks: tracking,
  };
  const extra: Record<string, fc.Arbitrary<unknown>> = single
    ? { scheduledAt: scheduledAt(nowMs), attachments }
    : {};
  const content: Record<string, fc.Arbitrary<unknown>> = mode === 'inline'
    ? {
        subject: nonEmpty,
        html: fc.option(fc.string({ maxLength: 200 })),
        text: fc.string({ minLength: 1, maxLength: 200 }),
        templateId: fc.constant(null),
        variables: fc.constant(null),
      }
    : {
        templateId: fc.integer({ min: 1, max: 1_000_000 }),
        variables: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.string({ maxLength: 20 }), {
          maxKeys: 5,
        }),
        html: fc.constant(null),
      };
  const required = ['from', 'to', ...(mode === 'inline' ? ['subject', 'text'] : ['templateId', 'variables'])];
  return fc.record({ ...common, ...extra, ...content }, { requiredKeys: required }) as fc.Arbitrary<Email>;
}

/** One way to break one rule: the mode it applies to, and what it does (returns the path that must be named). */
export interface Breaker {
  name: string;
  mode: Mode;
  singleOnly?: boolean;
  apply(email: Email, pick: number, nowMs: number): string;
}

const recipientsOf = (e: Email) => e.to as string[];
const withCr = (s: string, pick: number) =>
  s.slice(0, pick % (s.length + 1)) + (pick % 2 ? '\r' : '\n') + s.slice(pick % (s.length + 1));

export const breakers: Breaker[] = [
  { name: 'empty from', mode: 'inline', apply: (e) => ((e.from = ''), 'from') },
  {
    name: 'line break in from',
    mode: 'inline',
    apply: (e, n) => ((e.from = withCr(e.from as string, n)), 'from'),
  },
  { name: 'from without @', mode: 'template', apply: (e) => ((e.from = 'nobody'), 'from') },
  { name: 'no recipients', mode: 'inline', apply: (e) => ((e.to = []), 'to') },
  {
    name: '51 recipients',
    mode: 'template',
    apply: (e) => ((e.to = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`)), 'to'),
  },
  {
    name: 'bad recipient',
    mode: 'inline',
    apply: (e, n) => {
      const i = n % recipientsOf(e).length;
      recipientsOf(e)[i] = 'no-at-sign.example.com';
      return `to[${i}]`;
    },
  },
  {
    name: 'line break in recipient',
    mode: 'template',
    apply: (e, n) => {
      const i = n % recipientsOf(e).length;
      recipientsOf(e)[i] = withCr(recipientsOf(e)[i], n);
      return `to[${i}]`;
    },
  },
  { name: 'no subject inline', mode: 'inline', apply: (e) => (delete e.subject, 'subject') },
  { name: 'empty subject', mode: 'inline', apply: (e) => ((e.subject = ''), 'subject') },
  {
    name: 'line break in subject',
    mode: 'inline',
    apply: (e, n) => ((e.subject = withCr(e.subject as string, n)), 'subject'),
  },
  { name: 'subject with template', mode: 'template', apply: (e) => ((e.subject = 'Hi'), 'subject') },
  { name: 'no body inline', mode: 'inline', apply: (e) => (delete e.html, delete e.text, 'html') },
  { name: 'text with template', mode: 'template', apply: (e) => ((e.text = 'x'), 'text') },
  { name: 'no variables with template', mode: 'template', apply: (e) => (delete e.variables, 'variables') },
  { name: 'variables inline', mode: 'inline', apply: (e) => ((e.variables = { a: 'b' }), 'variables') },
  {
    name: 'variable not a string',
    mode: 'template',
    apply: (e, n) => ((e.variables = { v: n }), 'variables.v'),
  },
  {
    name: 'templateId not a positive integer',
    mode: 'template',
    apply: (e, n) => ((e.templateId = n % 2 ? -n : n + 0.5), 'templateId'),
  },
  { name: 'trackOpens not boolean', mode: 'inline', apply: (e) => ((e.trackOpens = 'yes'), 'trackOpens') },
  {
    name: 'trackClicks not boolean',
    mode: 'template',
    apply: (e, n) => ((e.trackClicks = n), 'trackClicks'),
  },
  {
    name: 'scheduledAt beyond 30 days',
    mode: 'inline',
    singleOnly: true,
    apply: (e, n, now) => (
      (e.scheduledAt = new Date(now + MAX_SCHEDULE_AHEAD_MS + 60_000 + n)),
      'scheduledAt'
    ),
  },
  {
    name: 'scheduledAt without timezone',
    mode: 'template',
    singleOnly: true,
    apply: (e) => ((e.scheduledAt = '2030-01-01T10:00:00'), 'scheduledAt'),
  },
  {
    name: '6 attachments',
    mode: 'inline',
    singleOnly: true,
    apply: (e) => (
      (e.attachments = Array.from({ length: 6 }, () => ({ filename: 'a', content: 'YQ==' }))),
      'attachments'
    ),
  },
  {
    name: 'attachments over 1.3 MiB',
    mode: 'template',
    singleOnly: true,
    apply: (e, n) => {
      const size = MAX_ATTACHMENT_TOTAL_BYTES + 1 + (n % 3);
      e.attachments = [{ filename: 'big.bin', content: Buffer.alloc(size).toString('base64') }];
      return 'attachments';
    },
  },
  {
    name: 'attachment content not base64',
    mode: 'inline',
    singleOnly: true,
    apply: (e, n) => {
      e.attachments = [{ filename: 'a.txt', content: 'YWJj'.repeat((n % 4) + 1) + '!' }];
      return 'attachments[0].content';
    },
  },
  {
    name: 'attachment filename too long',
    mode: 'template',
    singleOnly: true,
    apply: (e, n) => (
      (e.attachments = [{ filename: 'f'.repeat(256 + (n % 10)), content: 'YQ==' }]),
      'attachments[0].filename'
    ),
  },
  ...['cc', 'bcc', 'replyTo', 'reply_to', 'headers', 'tags', 'raw', 'mime'].map((field, k): Breaker => ({
    name: `unsupported ${field}`,
    mode: k % 2 ? 'inline' : 'template',
    apply: (e) => ((e[field] = ['x@example.com']), field),
  })),
  {
    name: 'inline attachment',
    mode: 'inline',
    singleOnly: true,
    apply: (e) => (
      (e.attachments = [{ filename: 'logo.png', content: 'YQ==', cid: 'logo' }]),
      'attachments[0].cid'
    ),
  },
  { name: 'unknown field', mode: 'template', apply: (e, n) => ((e[`x${n}`] = 1), `x${n}`) },
];

/** A valid email together with a rule breaker that applies to it. */
export function brokenEmail(single: boolean, nowMs = Date.now()) {
  const usable = breakers.filter((b) => single || !b.singleOnly);
  return fc
    .constantFrom(...usable)
    .chain((breaker) =>
      fc.tuple(fc.constant(breaker), validEmail(breaker.mode, single, nowMs), fc.nat(1000)),
    );
}
