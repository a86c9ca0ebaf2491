import { MAX_ATTACHMENT_TOTAL_BYTES } from '../../lib/dto/index.js';
import { attachment, batch, DAY_MS, inline, NOW, recipients, templated, without } from './email-fixtures.js';

/** One rule, one side of it. */
export interface Case {
  rule: string;
  input: unknown;
  ok: boolean;
  /** Path an issue must carry when the input is refused. */
  path?: string;
  /** Text the message at `path` must contain. */
  text?: RegExp;
  /** Depends on the fixed clock: not replayed through the DTO, which reads the real clock. */
  clock?: boolean;
}

const at = (ms: number) => new Date(NOW.getTime() + ms);
const emoji = '\u{1F4CE}';
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Single sends. */
export const singleCases: Case[] = [
  // from: min length 1, address forms, CR/LF
  { rule: 'from bare address', input: inline({ from: 'a@example.com' }), ok: true },
  { rule: 'from with display name', input: inline({ from: 'Team Mail <team@mail.example.com>' }), ok: true },
  { rule: 'from with quoted name', input: inline({ from: '"Doe, Jane" <jane@example.com>' }), ok: true },
  { rule: 'from angle address only', input: inline({ from: '<jane@example.com>' }), ok: true },
  { rule: 'from non-ASCII', input: inline({ from: 'José <josé@exämple.com>' }), ok: true },
  { rule: 'from missing', input: without(inline(), 'from'), ok: false, path: 'from', text: /required/ },
  {
    rule: 'from empty (min 1)',
    input: inline({ from: '' }),
    ok: false,
    path: 'from',
    text: /must not be empty/,
  },
  {
    rule: 'from without address',
    input: inline({ from: 'Jane Doe' }),
    ok: false,
    path: 'from',
    text: /not a valid/,
  },
  { rule: 'from dot-less domain', input: inline({ from: 'jane@localhost' }), ok: false, path: 'from' },
  { rule: 'from two @', input: inline({ from: 'a@b@example.com' }), ok: false, path: 'from' },
  { rule: 'from trailing dot', input: inline({ from: 'jane.@example.com' }), ok: false, path: 'from' },
  { rule: 'from label hyphen', input: inline({ from: 'jane@-example.com' }), ok: false, path: 'from' },
  { rule: 'from numeric TLD', input: inline({ from: 'jane@10.0.0.1' }), ok: false, path: 'from' },
  {
    rule: 'from unquoted comma',
    input: inline({ from: 'Doe, Jane <jane@example.com>' }),
    ok: false,
    path: 'from',
  },
  { rule: 'from space inside', input: inline({ from: 'ja ne@example.com' }), ok: false, path: 'from' },
  {
    rule: 'from not a string',
    input: inline({ from: 42 }),
    ok: false,
    path: 'from',
    text: /must be a string/,
  },
  {
    rule: 'from CRLF injection',
    input: inline({ from: 'a@example.com\r\nBcc: victim@example.com' }),
    ok: false,
    path: 'from',
    text: /line break \(CR or LF\)/,
  },
  {
    rule: 'from LF in name',
    input: inline({ from: 'Ja\nne <j@example.com>' }),
    ok: false,
    path: 'from',
    text: /CR or LF/,
  },
  // to: 1 to 50
  { rule: 'to 1 recipient', input: inline({ to: recipients(1) }), ok: true },
  { rule: 'to 50 recipients', input: inline({ to: recipients(50) }), ok: true },
  { rule: 'to 0 recipients', input: inline({ to: [] }), ok: false, path: 'to', text: /at least 1/ },
  {
    rule: 'to 51 recipients',
    input: inline({ to: recipients(51) }),
    ok: false,
    path: 'to',
    text: /51 .*at most 50/,
  },
  { rule: 'to missing', input: without(inline(), 'to'), ok: false, path: 'to', text: /required/ },
  { rule: 'to a string', input: inline({ to: 'ada@example.com' }), ok: false, path: 'to', text: /array/ },
  {
    rule: 'to bad entry',
    input: inline({ to: [...recipients(7), 'nobody', 'x@example.com'] }),
    ok: false,
    path: 'to[7]',
    text: /not a valid email address/,
  },
  {
    rule: 'to entry with LF',
    input: inline({ to: ['a@example.com\n'] }),
    ok: false,
    path: 'to[0]',
    text: /CR or LF/,
  },
  { rule: 'to entry not a string', input: inline({ to: ['a@example.com', 5] }), ok: false, path: 'to[1]' },
  { rule: 'to display-name entry', input: inline({ to: ['Ada Lovelace <ada@example.com>'] }), ok: true },
  // subject: min 1, required inline, no CR/LF
  { rule: 'subject of 1 character', input: inline({ subject: 'x' }), ok: true },
  { rule: 'subject empty', input: inline({ subject: '' }), ok: false, path: 'subject', text: /non-empty/ },
  {
    rule: 'subject missing inline',
    input: without(inline(), 'subject'),
    ok: false,
    path: 'subject',
    text: /unless templateId/,
  },
  { rule: 'subject null inline', input: inline({ subject: null }), ok: false, path: 'subject' },
  {
    rule: 'subject with CR',
    input: inline({ subject: 'Hi\rBcc: x' }),
    ok: false,
    path: 'subject',
    text: /CR or LF/,
  },
  { rule: 'subject not a string', input: inline({ subject: 3 }), ok: false, path: 'subject' },
  // inline bodies
  { rule: 'html only', input: inline({ text: undefined, html: '<p>x</p>' }), ok: true },
  { rule: 'text only', input: inline({ text: 'x' }), ok: true },
  { rule: 'html and text', input: inline({ html: '<b>x</b>', text: 'x' }), ok: true },
  { rule: 'empty html beside text', input: inline({ html: '', text: 'x' }), ok: true },
  { rule: 'null html beside text', input: inline({ html: null, text: 'x' }), ok: true },
  {
    rule: 'no body',
    input: without(inline(), 'text'),
    ok: false,
    path: 'html',
    text: /html or text is required/,
  },
  { rule: 'empty bodies', input: inline({ html: '', text: '' }), ok: false, path: 'html' },
  { rule: 'null bodies', input: inline({ html: null, text: null }), ok: false, path: 'html' },
  { rule: 'html not a string', input: inline({ html: 5 }), ok: false, path: 'html', text: /string or null/ },
  { rule: 'text an object', input: inline({ text: {} }), ok: false, path: 'text' },
  { rule: 'body with line breaks', input: inline({ text: 'line 1\r\nline 2' }), ok: true },
  // template mode
  { rule: 'template with variables', input: templated(), ok: true },
  { rule: 'template with empty variables', input: templated({ variables: {} }), ok: true },
  { rule: 'template null html/text', input: templated({ html: null, text: null }), ok: true },
  {
    rule: 'template with subject',
    input: templated({ subject: 'Hi' }),
    ok: false,
    path: 'subject',
    text: /omitted/,
  },
  {
    rule: 'template with html',
    input: templated({ html: '<p/>' }),
    ok: false,
    path: 'html',
    text: /omitted/,
  },
  { rule: 'template with text', input: templated({ text: 'x' }), ok: false, path: 'text', text: /omitted/ },
  {
    rule: 'template without variables',
    input: without(templated(), 'variables'),
    ok: false,
    path: 'variables',
  },
  { rule: 'template null variables', input: templated({ variables: null }), ok: false, path: 'variables' },
  {
    rule: 'templateId fraction',
    input: templated({ templateId: 1.5 }),
    ok: false,
    path: 'templateId',
    text: /integer/,
  },
  { rule: 'templateId zero', input: templated({ templateId: 0 }), ok: false, path: 'templateId' },
  { rule: 'templateId string', input: templated({ templateId: '7' }), ok: false, path: 'templateId' },
  { rule: 'templateId 1', input: templated({ templateId: 1 }), ok: true },
  { rule: 'templateId null inline', input: inline({ templateId: null }), ok: true },
  // variables
  {
    rule: 'variables without templateId',
    input: inline({ variables: { a: 'b' } }),
    ok: false,
    path: 'variables',
  },
  { rule: 'variables null inline', input: inline({ variables: null }), ok: true },
  {
    rule: 'variable not a string',
    input: templated({ variables: { count: 3 } }),
    ok: false,
    path: 'variables.count',
  },
  {
    rule: 'variable with odd key',
    input: templated({ variables: { 'first name': null } }),
    ok: false,
    path: 'variables["first name"]',
  },
  { rule: 'variables an array', input: templated({ variables: ['a'] }), ok: false, path: 'variables' },
  // tracking
  { rule: 'tracking booleans', input: inline({ trackOpens: true, trackClicks: false }), ok: true },
  { rule: 'tracking null', input: inline({ trackOpens: null, trackClicks: null }), ok: true },
  { rule: 'trackOpens string', input: inline({ trackOpens: 'yes' }), ok: false, path: 'trackOpens' },
  { rule: 'trackClicks number', input: inline({ trackClicks: 1 }), ok: false, path: 'trackClicks' },
  // scheduledAt: at most 30 days ahead, past allowed
  { rule: 'scheduledAt null', input: inline({ scheduledAt: null }), ok: true },
  {
    rule: 'scheduledAt exactly 30 days',
    input: inline({ scheduledAt: at(30 * DAY_MS) }),
    ok: true,
    clock: true,
  },
  {
    rule: 'scheduledAt 30 days + 1 ms',
    input: inline({ scheduledAt: at(30 * DAY_MS + 1) }),
    ok: false,
    path: 'scheduledAt',
    text: /more than 30 days/,
    clock: true,
  },
  {
    rule: 'scheduledAt string 30 days',
    input: inline({ scheduledAt: '2030-01-31T00:00:00Z' }),
    ok: true,
    clock: true,
  },
  {
    rule: 'scheduledAt string beyond 30 days by offset',
    input: inline({ scheduledAt: '2030-01-30T23:00:00.001-01:00' }),
    ok: false,
    path: 'scheduledAt',
    clock: true,
  },
  { rule: 'scheduledAt in the past', input: inline({ scheduledAt: '2001-01-01T00:00:00Z' }), ok: true },
  { rule: 'scheduledAt past Date', input: inline({ scheduledAt: new Date(0) }), ok: true },
  {
    rule: 'scheduledAt without timezone',
    input: inline({ scheduledAt: '2030-01-02T00:00:00' }),
    ok: false,
    path: 'scheduledAt',
    text: /timezone/,
  },
  {
    rule: 'scheduledAt date only',
    input: inline({ scheduledAt: '2030-01-02' }),
    ok: false,
    path: 'scheduledAt',
  },
  {
    rule: 'scheduledAt 30 February',
    input: inline({ scheduledAt: '2029-02-30T00:00:00Z' }),
    ok: false,
    path: 'scheduledAt',
  },
  {
    rule: 'scheduledAt invalid Date',
    input: inline({ scheduledAt: new Date('x') }),
    ok: false,
    path: 'scheduledAt',
    text: /invalid Date/,
  },
  { rule: 'scheduledAt a number', input: inline({ scheduledAt: 1 }), ok: false, path: 'scheduledAt' },
  // attachments: at most 5, 1.3 MiB decoded, filename 1-255, real base64
  { rule: 'no attachments', input: inline({ attachments: [] }), ok: true },
  {
    rule: '5 attachments',
    input: inline({ attachments: Array.from({ length: 5 }, () => attachment(3)) }),
    ok: true,
  },
  {
    rule: '6 attachments',
    input: inline({ attachments: Array.from({ length: 6 }, () => attachment(3)) }),
    ok: false,
    path: 'attachments',
    text: /at most 5/,
  },
  {
    rule: 'attachments exactly 1.3 MiB',
    input: inline({ attachments: [attachment(MAX_ATTACHMENT_TOTAL_BYTES)] }),
    ok: true,
  },
  {
    rule: 'attachments 1.3 MiB + 1 byte',
    input: inline({ attachments: [attachment(MAX_ATTACHMENT_TOTAL_BYTES + 1)] }),
    ok: false,
    path: 'attachments',
    text: /1363149 bytes/,
  },
  {
    rule: 'attachments combined over 1.3 MiB',
    input: inline({
      attachments: [attachment(700_000), attachment(MAX_ATTACHMENT_TOTAL_BYTES - 700_000 + 2)],
    }),
    ok: false,
    path: 'attachments',
  },
  {
    rule: 'attachments combined at 1.3 MiB',
    input: inline({ attachments: [attachment(700_000), attachment(MAX_ATTACHMENT_TOTAL_BYTES - 700_000)] }),
    ok: true,
  },
  {
    rule: 'attachments not an array',
    input: inline({ attachments: attachment(1) }),
    ok: false,
    path: 'attachments',
  },
  {
    rule: 'attachment not an object',
    input: inline({ attachments: ['x'] }),
    ok: false,
    path: 'attachments[0]',
  },
  {
    rule: 'filename 1 character',
    input: inline({ attachments: [attachment(1, { filename: 'a' })] }),
    ok: true,
  },
  {
    rule: 'filename 255 characters',
    input: inline({ attachments: [attachment(1, { filename: 'a'.repeat(255) })] }),
    ok: true,
  },
  {
    rule: 'filename 255 emoji',
    input: inline({ attachments: [attachment(1, { filename: emoji.repeat(255) })] }),
    ok: true,
  },
  {
    rule: 'filename 256 characters',
    input: inline({ attachments: [attachment(1, { filename: 'a'.repeat(256) })] }),
    ok: false,
    path: 'attachments[0].filename',
    text: /256 characters/,
  },
  {
    rule: 'filename empty',
    input: inline({ attachments: [attachment(1, { filename: '' })] }),
    ok: false,
    path: 'attachments[0].filename',
  },
  {
    rule: 'filename missing',
    input: inline({ attachments: [without(attachment(1), 'filename')] }),
    ok: false,
    path: 'attachments[0].filename',
  },
  {
    rule: 'filename with LF',
    input: inline({ attachments: [attachment(1, { filename: 'a\nb.txt' })] }),
    ok: false,
    path: 'attachments[0].filename',
    text: /CR or LF/,
  },
  {
    rule: 'content padded base64',
    input: inline({ attachments: [attachment(1, { content: b64('hi') })] }),
    ok: true,
  },
  {
    rule: 'content empty',
    input: inline({ attachments: [attachment(1, { content: '' })] }),
    ok: false,
    path: 'attachments[0].content',
    text: /not be empty/,
  },
  {
    rule: 'content missing',
    input: inline({ attachments: [without(attachment(1), 'content')] }),
    ok: false,
    path: 'attachments[0].content',
  },
  {
    rule: 'content unpadded',
    input: inline({ attachments: [attachment(1, { content: 'aGk' })] }),
    ok: false,
    path: 'attachments[0].content',
    text: /base64/,
  },
  {
    rule: 'content url-safe',
    input: inline({ attachments: [attachment(1, { content: 'a-_a' })] }),
    ok: false,
    path: 'attachments[0].content',
  },
  {
    rule: 'content wrapped',
    input: inline({ attachments: [attachment(1, { content: 'aGVs\nbG8=' })] }),
    ok: false,
    path: 'attachments[0].content',
  },
  {
    rule: 'content padding inside',
    input: inline({ attachments: [attachment(1, { content: 'a=Gk' })] }),
    ok: false,
    path: 'attachments[0].content',
  },
  {
    rule: 'content only padding',
    input: inline({ attachments: [attachment(1, { content: '====' })] }),
    ok: false,
    path: 'attachments[0].content',
  },
  {
    rule: 'contentType given',
    input: inline({ attachments: [attachment(1, { contentType: 'text/plain' })] }),
    ok: true,
  },
  {
    rule: 'contentType with CRLF',
    input: inline({ attachments: [attachment(1, { contentType: 'text/plain\r\nX-Evil: 1' })] }),
    ok: false,
    path: 'attachments[0].contentType',
    text: /CR or LF/,
  },
  {
    rule: 'contentType number',
    input: inline({ attachments: [attachment(1, { contentType: 5 })] }),
    ok: false,
    path: 'attachments[0].contentType',
  },
  // unsupported features: refused by name
  ...['cc', 'bcc', 'replyTo', 'reply_to', 'headers', 'tags', 'raw', 'mime'].map((field): Case => ({
    rule: `unsupported ${field}`,
    input: inline({ [field]: field === 'headers' ? { 'X-A': '1' } : ['x@example.com'] }),
    ok: false,
    path: field,
    text: /not supported: the email service does not support/,
  })),
  {
    rule: 'unsupported cc even null',
    input: inline({ cc: null }),
    ok: false,
    path: 'cc',
    text: /CC recipients/,
  },
  ...['path', 'url', 'href', 'contentId', 'cid', 'disposition'].map((field): Case => ({
    rule: `unsupported attachment ${field}`,
    input: inline({ attachments: [attachment(1, { [field]: 'inline' })] }),
    ok: false,
    path: `attachments[0].${field}`,
    text: /not supported/,
  })),
  {
    rule: 'unknown field',
    input: inline({ priority: 'high' }),
    ok: false,
    path: 'priority',
    text: /not a field of an email/,
  },
  {
    rule: 'unknown attachment field',
    input: inline({ attachments: [attachment(1, { size: 1 })] }),
    ok: false,
    path: 'attachments[0].size',
    text: /not a field of an attachment/,
  },
];

/** Batches. */
export const batchCases: Case[] = [
  { rule: 'batch of 1', input: batch(1), ok: true },
  { rule: 'batch of 100', input: batch(100), ok: true },
  { rule: 'batch of 0', input: [], ok: false, path: '', text: /empty/ },
  { rule: 'batch of 101', input: batch(101), ok: false, path: '', text: /101 emails; at most 100/ },
  { rule: 'batch not an array', input: { items: batch(1) }, ok: false, path: '' },
  { rule: 'batch template item', input: [templated()], ok: true },
  {
    rule: 'batch item bad recipient',
    input: batch(5).map((item, i) => (i === 3 ? { ...item, to: [...recipients(7), 'bad'] } : item)),
    ok: false,
    path: '[3].to[7]',
  },
  { rule: 'batch item not an object', input: [batch(1)[0], 'x'], ok: false, path: '[1]' },
  {
    rule: 'batch item scheduledAt',
    input: batch(3, { scheduledAt: null }),
    ok: false,
    path: '[2].scheduledAt',
    text: /batches do not support/,
  },
  {
    rule: 'batch item attachments',
    input: batch(1, { attachments: [attachment(1)] }),
    ok: false,
    path: '[0].attachments',
    text: /batches do not support attachments/,
  },
  {
    rule: 'batch item cc',
    input: batch(1, { cc: ['a@example.com'] }),
    ok: false,
    path: '[0].cc',
    text: /not supported/,
  },
  { rule: 'batch item 51 recipients', input: batch(1, { to: recipients(51) }), ok: false, path: '[0].to' },
  { rule: 'batch item content rule', input: batch(2, { variables: {} }), ok: false, path: '[1].variables' },
  { rule: 'batch item missing from', input: [without(batch(1)[0], 'from')], ok: false, path: '[0].from' },
];
