import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { base64DecodedLength } from '../../lib/validation/attachment.rules.js';
import { SendEmailDto, BatchEmailItemDto } from '../../lib/index.js';
import { isEmailAddress } from '../../lib/validation/address.decorator.js';
import { validateBatchItems } from '../../lib/validation/batch.rules.js';
import { validateEmailInput } from '../../lib/validation/send.rules.js';
import { address, brokenEmail, validEmail } from './email.arbitraries.js';

const dtoAccepts = (cls: typeof SendEmailDto | typeof BatchEmailItemDto, input: unknown): boolean => {
  const json = JSON.parse(JSON.stringify(input)) as object; // what ValidationPipe would receive over HTTP
  return (
    validateSync(plainToInstance(cls, json), { whitelist: true, forbidNonWhitelisted: true }).length === 0
  );
};

describe('properties of the fast validator', () => {
  it('accepts every address in the accepted forms, and fast-check emailAddress() within 254 characters', () => {
    fc.assert(fc.property(address, (a) => isEmailAddress(a)));
    fc.assert(
      fc.property(
        fc.emailAddress().filter((a) => a.length <= 254),
        (a) => isEmailAddress(a),
      ),
    );
  });

  it('decodes the size of any base64 exactly', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64');
        expect(base64DecodedLength(text)).toBe(bytes.length === 0 ? -1 : bytes.length);
      }),
    );
  });

  it('passes random valid single sends, inline and template', () => {
    const now = Date.now();
    const arb = fc.oneof(validEmail('inline', true, now), validEmail('template', true, now));
    fc.assert(
      fc.property(arb, (email) => expect(validateEmailInput(email, { now: new Date(now) })).toEqual([])),
    );
  });

  it('passes random valid batches', () => {
    const item = fc.oneof(validEmail('inline', false), validEmail('template', false));
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 100 }), (items) => {
        expect(validateBatchItems(items)).toEqual([]);
      }),
      { numRuns: 30 },
    );
  });

  it('fails a single send with one broken rule, naming the broken path', () => {
    const now = Date.now();
    fc.assert(
      fc.property(brokenEmail(true, now), ([breaker, email, pick]) => {
        const path = breaker.apply(email, pick, now);
        const issues = validateEmailInput(email, { now: new Date(now) });
        expect(issues.map((i) => i.path)).toContain(path);
        expect(issues.find((i) => i.path === path)!.message.startsWith(path)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('fails a batch with one broken item, naming [index].path', () => {
    const arb = fc.tuple(
      brokenEmail(false),
      fc.array(validEmail('inline', false), { minLength: 0, maxLength: 20 }),
      fc.nat(),
    );
    fc.assert(
      fc.property(arb, ([[breaker, email, pick], others, where]) => {
        const path = breaker.apply(email, pick, Date.now());
        const index = where % (others.length + 1);
        const items = [...others.slice(0, index), email, ...others.slice(index)];
        const issues = validateBatchItems(items);
        expect(issues.map((i) => i.path)).toContain(`[${index}].${path}`);
        expect(issues.every((i) => i.path.startsWith(`[${index}].`))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});

describe('the fast validator and the DTOs agree', () => {
  const mixed = (single: boolean) =>
    fc.oneof(
      fc.oneof(validEmail('inline', single), validEmail('template', single)),
      brokenEmail(single).map(([breaker, email, pick]) => (breaker.apply(email, pick, Date.now()), email)),
    );

  it('SendEmailDto accepts exactly what validateEmailInput accepts', () => {
    fc.assert(
      fc.property(mixed(true), (email) => {
        expect(dtoAccepts(SendEmailDto, email)).toBe(validateEmailInput(email).length === 0);
      }),
      { numRuns: 300 },
    );
  });

  it('BatchEmailItemDto accepts exactly the items validateBatchItems accepts', () => {
    const withSingleFields = fc
      .tuple(mixed(false), fc.boolean())
      .map(([item, addSchedule]) => (addSchedule ? { ...item, scheduledAt: null } : item));
    fc.assert(
      fc.property(withSingleFields, (item) => {
        expect(dtoAccepts(BatchEmailItemDto, item)).toBe(validateBatchItems([item]).length === 0);
      }),
      { numRuns: 300 },
    );
  });
});
