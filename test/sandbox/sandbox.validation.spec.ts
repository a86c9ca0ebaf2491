import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, RawClient } from './sandbox.client.js';
import { useSandbox } from '../support/sandbox.js';

const b64 = (bytes: number): string => Buffer.alloc(bytes, 7).toString('base64');
const MAX = 1.3 * 1024 * 1024;
const soon = (ms: number): string => new Date(Date.now() + ms).toISOString();
const DAY = 86_400_000;

describe('EmailSandbox validation of POST /emails', () => {
  const sandbox = useSandbox({
    templates: { 3: { subject: 'Hi {{name}}', text: 'Hello {{name}}' } },
    reset: true,
  });
  const client = new RawClient(() => sandbox);

  afterAll(async () => {
    await client.close();
  });

  const rejected: Array<[string, unknown]> = [
    ['a body that is not JSON', '{"from":'],
    ['an empty body', ''],
    ['a JSON array', [inline()]],
    ['a missing from', inline({ from: undefined })],
    ['an empty from', inline({ from: '' })],
    ['a from that is not an address', inline({ from: 'orders' })],
    ['a missing to', inline({ to: undefined })],
    ['an empty to', inline({ to: [] })],
    ['51 recipients', inline({ to: Array.from({ length: 51 }, (_, i) => `u${i}@example.org`) })],
    ['a recipient that is not a string', inline({ to: [42] })],
    ['a recipient that is not an address', inline({ to: ['nobody'] })],
    ['a missing subject in inline mode', inline({ subject: undefined })],
    ['an empty subject', inline({ subject: '' })],
    ['a non-string subject', inline({ subject: 5 })],
    ['no html and no text', inline({ html: undefined, text: undefined })],
    ['empty html and null text', inline({ html: '', text: null })],
    ['a non-string html', inline({ html: 1 })],
    ['a non-boolean trackOpens', inline({ trackOpens: 'yes' })],
    ['a non-boolean trackClicks', inline({ trackClicks: 1 })],
    ['variables without templateId', inline({ variables: { a: 'b' } })],
    [
      'templateId with a subject',
      { from: 'a@example.com', to: ['b@example.org'], templateId: 3, subject: 'x', variables: { name: 'A' } },
    ],
    [
      'templateId with html',
      { from: 'a@example.com', to: ['b@example.org'], templateId: 3, html: '<p/>', variables: { name: 'A' } },
    ],
    [
      'templateId with text',
      { from: 'a@example.com', to: ['b@example.org'], templateId: 3, text: 't', variables: { name: 'A' } },
    ],
    [
      'a non-integer templateId',
      { from: 'a@example.com', to: ['b@example.org'], templateId: 1.5, variables: {} },
    ],
    [
      'a non-string variable',
      { from: 'a@example.com', to: ['b@example.org'], templateId: 3, variables: { name: 1 } },
    ],
    ['a scheduledAt that is not a date-time', inline({ scheduledAt: 'tomorrow' })],
    ['a scheduledAt without a time zone', inline({ scheduledAt: '2030-01-01T10:00:00' })],
    ['a scheduledAt more than 30 days ahead', inline({ scheduledAt: soon(30 * DAY + 60_000) })],
    ['attachments that are not an array', inline({ attachments: {} })],
    [
      '6 attachments',
      inline({
        attachments: Array.from({ length: 6 }, (_, i) => ({ filename: `${i}.txt`, content: 'aGk=' })),
      }),
    ],
    ['an empty filename', inline({ attachments: [{ filename: '', content: 'aGk=' }] })],
    ['a 256-character filename', inline({ attachments: [{ filename: 'a'.repeat(256), content: 'aGk=' }] })],
    [
      'a filename of 128 emoji (256 UTF-16 code units)',
      inline({ attachments: [{ filename: '\u{1F4CE}'.repeat(128), content: 'aGk=' }] }),
    ],
    [
      'a filename with a right-to-left override',
      inline({ attachments: [{ filename: 'invoice\u202Efdp.exe', content: 'aGk=' }] }),
    ],
    [
      'a filename with a lone surrogate',
      inline({ attachments: [{ filename: 'a\uD83D.txt', content: 'aGk=' }] }),
    ],
    ['a subject with a lone surrogate', inline({ subject: 'Order \uD83D' })],
    ['a subject with an isolate', inline({ subject: 'Order \u2066x\u2069' })],
    ['html with a lone surrogate', inline({ html: '<p>\uDE00</p>' })],
    [
      'a variable with a lone surrogate',
      { from: 'a@example.com', to: ['b@example.org'], templateId: 3, variables: { name: '\uDC00' } },
    ],
    ['a recipient with a lone surrogate', inline({ to: ['\uD800x@example.org'] })],
    ['empty content', inline({ attachments: [{ filename: 'a.txt', content: '' }] })],
    ['content that is not base64', inline({ attachments: [{ filename: 'a.txt', content: 'not base64!' }] })],
    [
      'a non-string contentType',
      inline({ attachments: [{ filename: 'a.txt', content: 'aGk=', contentType: 3 }] }),
    ],
    [
      'attachments over 1.3 MiB decoded',
      inline({ attachments: [{ filename: 'a.bin', content: b64(Math.floor(MAX) + 1) }] }),
    ],
    [
      'attachments over 1.3 MiB combined',
      inline({
        attachments: [
          { filename: 'a', content: b64(700_000) },
          { filename: 'b', content: b64(700_000) },
        ],
      }),
    ],
    ['cc (not supported)', inline({ cc: ['x@example.org'] })],
    ['bcc (not supported)', inline({ bcc: ['x@example.org'] })],
    ['replyTo (not supported)', inline({ replyTo: 'x@example.org' })],
    ['headers (not supported)', inline({ headers: { 'X-A': 'b' } })],
    [
      'an unknown attachment field',
      inline({ attachments: [{ filename: 'a.txt', content: 'aGk=', url: 'https://x' }] }),
    ],
  ];

  it.each(rejected)('answers 400 with {error} for %s, creating nothing', async (_name, body) => {
    const res = await client.send(body);
    expect(res.status).toBe(400);
    expect(typeof res.json.error).toBe('string');
    expect(res.json.error.length).toBeGreaterThan(0);
    expect(sandbox.messages()).toHaveLength(0);
  });

  const accepted: Array<[string, unknown]> = [
    ['html only', inline({ text: undefined })],
    [
      'a filename of 127 emoji and a letter (255 UTF-16 code units)',
      inline({ attachments: [{ filename: '\u{1F4CE}'.repeat(127) + 'a', content: 'aGk=' }] }),
    ],
    ['a subject with a right-to-left mark', inline({ subject: '\u05D4\u05D6 \u200F#123' })],
    ['html with direction controls', inline({ html: '<p>\u202Eabc\u202C</p>' })],
    ['text only with html null', inline({ html: null })],
    ['50 recipients', inline({ to: Array.from({ length: 50 }, (_, i) => `u${i}@example.org`) })],
    ['a display-name sender', inline({ from: '"Shop, Inc." <orders@example.com>' })],
    [
      'null optional fields',
      inline({ templateId: null, variables: null, trackOpens: null, trackClicks: null, scheduledAt: null }),
    ],
    [
      '5 attachments of exactly 1.3 MiB together',
      inline({
        attachments: [0, 1, 2, 3, 4].map((i) => ({
          filename: `${i}`,
          content: b64(i < 4 ? 272_629 : Math.floor(MAX) - 4 * 272_629),
        })),
      }),
    ],
    [
      'a 255-character filename with a contentType',
      inline({ attachments: [{ filename: 'a'.repeat(255), content: 'aGk=', contentType: 'text/plain' }] }),
    ],
    ['a scheduledAt 30 days ahead', inline({ scheduledAt: soon(30 * DAY - 60_000) })],
    ['a scheduledAt with an offset', inline({ scheduledAt: '2020-01-01T10:00:00+02:00' })],
  ];

  it.each(accepted)('accepts %s (201)', async (_name, body) => {
    const res = await client.send(body);
    expect(res.status).toBe(201);
    expect(sandbox.messages()).toHaveLength(1);
  });

  it('names the field in the error text', async () => {
    expect((await client.send(inline({ to: [] }))).json.error).toMatch(/\bto\b/);
    expect((await client.send(inline({ cc: ['x@example.org'] }))).json.error).toMatch(/\bcc\b/);
    expect(
      (await client.send(inline({ attachments: [{ filename: '', content: 'aGk=' }] }))).json.error,
    ).toMatch(/attachments\[0\]\.filename/);
  });
});

describe('EmailSandbox unknownFields option', () => {
  it("ignores fields the contract does not define with unknownFields: 'ignore'", async () => {
    // own sandbox: options unlike the shared one (useSandbox starts one per describe)
    const sandbox = await EmailSandbox.start({ unknownFields: 'ignore' });
    const client = new RawClient(() => sandbox);
    try {
      const res = await client.send(inline({ cc: ['x@example.org'], metadata: { a: 1 } }));
      expect(res.status).toBe(201);
      expect(res.json).not.toHaveProperty('cc');
    } finally {
      await client.close();
      await sandbox.close();
    }
  });
});
