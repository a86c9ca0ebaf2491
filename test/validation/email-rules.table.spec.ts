import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { SendEmailDto, BatchEmailItemDto } from '../../lib/index.js';
import { validateBatchItems } from '../../lib/validation/batch.rules.js';
import { validateEmailInput } from '../../lib/validation/send.rules.js';
import { batchCases, singleCases as single } from './email-rules.cases.js';
import { attachment, batch, inline, NOW } from './email-fixtures.js';

describe('validateEmailInput: one case per rule', () => {
  it.each(single.map((c) => [c.rule, c] as const))('%s', (_rule, c) => {
    const issues = validateEmailInput(c.input, { now: NOW });
    if (c.ok) {
      expect(issues).toEqual([]);
      return;
    }
    const hit = issues.find((i) => i.path === c.path);
    expect(hit).toBeDefined();
    expect(hit!.message.startsWith(c.path!)).toBe(true);
    if (c.text) expect(hit!.message).toMatch(c.text);
  });

  it.each(single.filter((c) => !c.clock).map((c) => [c.rule, c] as const))(
    'SendEmailDto agrees: %s',
    (_r, c) => {
      const dto = plainToInstance(SendEmailDto, c.input as object);
      const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true });
      expect(errors.length === 0).toBe(c.ok);
    },
  );

  it('refuses non-objects at the root', () => {
    for (const input of [null, undefined, 'x', 3, [inline()], new Map()]) {
      expect(validateEmailInput(input)).toEqual([{ path: '', message: 'the email must be an object' }]);
    }
  });

  it('lists every problem, not only the first', () => {
    const issues = validateEmailInput({
      from: '',
      to: ['ok@example.com', 'bad', 'worse'],
      cc: ['x@example.com'],
    });
    expect(issues.map((i) => i.path).sort()).toEqual(['cc', 'from', 'html', 'subject', 'to[1]', 'to[2]']);
  });

  it('ignores fields whose value is undefined, as JSON does', () => {
    expect(validateEmailInput(inline({ cc: undefined, html: undefined, other: undefined }))).toEqual([]);
  });

  it('accepts a SendEmailDto instance built by class-transformer', () => {
    const dto = plainToInstance(SendEmailDto, inline({ attachments: [attachment(4)] }));
    expect(validateEmailInput(dto)).toEqual([]);
  });
});

describe('validateBatchItems: one case per rule', () => {
  it.each(batchCases.map((c) => [c.rule, c] as const))('%s', (_rule, c) => {
    const issues = validateBatchItems(c.input);
    if (c.ok) {
      expect(issues).toEqual([]);
      return;
    }
    const hit = issues.find((i) => i.path === c.path);
    expect(hit).toBeDefined();
    if (c.path) expect(hit!.message.startsWith(c.path)).toBe(true);
    if (c.text) expect(hit!.message).toMatch(c.text);
  });

  it('BatchEmailItemDto refuses scheduledAt and attachments, naming the batch rule', () => {
    const dto = plainToInstance(BatchEmailItemDto, {
      ...batch(1)[0],
      scheduledAt: '2030-01-01T00:00:00Z',
      attachments: [],
    });
    const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true });
    const texts = errors.flatMap((e) => Object.values(e.constraints ?? {}));
    expect(texts).toEqual([
      expect.stringMatching(/^scheduledAt is not allowed in a batch: batches do not support scheduling/),
      expect.stringMatching(/^attachments is not allowed in a batch: batches do not support attachments/),
    ]);
  });
});
