import { mkdtemp, rm, truncate, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { attachmentFromBuffer, attachmentFromFile, scheduleAt, scheduleIn } from '../../lib/index.js';
import { validateEmailInput } from '../../lib/validation/send.rules.js';
import { MAX_ATTACHMENT_TOTAL_BYTES } from '../../lib/validation/validation.constants.js';
import { EmailValidationError } from '../../lib/errors/email-validation.error.js';
import { DAY_MS, inline, NOW } from './email-fixtures.js';

const issuesOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(EmailValidationError);
    return (e as EmailValidationError).issues;
  }
  throw new Error('expected an EmailValidationError');
};

describe('attachmentFromBuffer', () => {
  it('base64-encodes the bytes and keeps the name and type', () => {
    const bytes = new Uint8Array([0, 1, 2, 250, 251, 252, 253]);
    const made = attachmentFromBuffer(bytes.subarray(1, 6), 'data.bin', 'application/octet-stream');
    expect(made).toEqual({
      filename: 'data.bin',
      content: 'AQL6+/w=',
      contentType: 'application/octet-stream',
    });
    expect(Buffer.from(made.content, 'base64')).toEqual(Buffer.from([1, 2, 250, 251, 252]));
    expect(validateEmailInput(inline({ attachments: [made] }))).toEqual([]);
  });

  it('omits contentType when not given', () => {
    expect(attachmentFromBuffer(Buffer.from('hi'), 'a.txt')).toEqual({ filename: 'a.txt', content: 'aGk=' });
  });

  it('accepts exactly 1.3 MiB and refuses one byte more, empty files and bad names', () => {
    expect(() => attachmentFromBuffer(Buffer.alloc(MAX_ATTACHMENT_TOTAL_BYTES), 'max.bin')).not.toThrow();
    expect(
      issuesOf(() => attachmentFromBuffer(Buffer.alloc(MAX_ATTACHMENT_TOTAL_BYTES + 1), 'big.bin')),
    ).toEqual([
      {
        path: 'content',
        message: expect.stringMatching(/^content is 1363149 bytes; .* at most 1363148 bytes/),
      },
    ]);
    const issues = issuesOf(() => attachmentFromBuffer(Buffer.alloc(0), 'a\r\nb', 'text/plain\n'));
    expect(issues.map((i) => i.path)).toEqual(['filename', 'contentType', 'content']);
  });
});

describe('attachmentFromFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nte-dto-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a file into an attachment named after it', async () => {
    const file = join(dir, 'report.csv');
    await writeFile(file, 'a,b\n1,2\n');
    await expect(attachmentFromFile(file, 'text/csv')).resolves.toEqual({
      filename: 'report.csv',
      content: Buffer.from('a,b\n1,2\n').toString('base64'),
      contentType: 'text/csv',
    });
    await expect(attachmentFromFile(file, undefined, 'renamed.csv')).resolves.toMatchObject({
      filename: 'renamed.csv',
    });
  });

  it('refuses an oversized file from its size, an empty file and a directory', async () => {
    const big = join(dir, 'big.bin');
    await writeFile(big, '');
    await truncate(big, MAX_ATTACHMENT_TOTAL_BYTES + 1); // sparse: refused from stat, never read
    await expect(attachmentFromFile(big)).rejects.toMatchObject({ issues: [{ path: 'content' }] });
    const empty = join(dir, 'empty.txt');
    await writeFile(empty, '');
    await expect(attachmentFromFile(empty)).rejects.toMatchObject({ issues: [{ path: 'content' }] });
    await mkdir(join(dir, 'sub'));
    await expect(attachmentFromFile(join(dir, 'sub'))).rejects.toBeInstanceOf(EmailValidationError);
  });

  it('lets file-system errors through', async () => {
    await expect(attachmentFromFile(join(dir, 'missing.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('scheduleAt / scheduleIn', () => {
  it('returns the UTC RFC 3339 string for a date within 30 days, past included', () => {
    expect(scheduleAt(new Date(NOW.getTime() + 30 * DAY_MS), { now: NOW })).toBe('2030-01-31T00:00:00.000Z');
    expect(scheduleAt(0, { now: NOW })).toBe('1970-01-01T00:00:00.000Z');
    expect(scheduleIn(3_600_000, { now: NOW })).toBe('2030-01-01T01:00:00.000Z');
  });

  it('refuses invalid dates and dates beyond 30 days', () => {
    expect(issuesOf(() => scheduleAt(new Date('nope')))).toEqual([
      { path: 'scheduledAt', message: 'scheduledAt is an invalid Date' },
    ]);
    expect(issuesOf(() => scheduleIn(30 * DAY_MS + 1, { now: NOW }))[0].message).toMatch(/more than 30 days/);
  });

  it('a Date may also go in scheduledAt as is', () => {
    expect(
      validateEmailInput(inline({ scheduledAt: new Date(NOW.getTime() + DAY_MS) }), { now: NOW }),
    ).toEqual([]);
  });
});
