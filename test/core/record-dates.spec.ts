import fc from 'fast-check';
import { isoTime, parseEmailLog } from '../../lib/records/email-record.parser.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json } from '../support/scripted-server.js';

/** What the general parser makes of `text`: the reference the fast path must agree with. */
const reference = (text: string): number => new Date(text).getTime();

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

describe('date-time fields of records', () => {
  it('the fast path reads what toISOString writes exactly as new Date does', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0100-01-01T00:00:00.000Z'), noInvalidDate: true }), (d) => {
        const text = d.toISOString();
        if (text.length !== 24) return; // years past 9999 are written with a sign: not the fast path's shape
        expect(isoTime(text)).toBe(reference(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with new Date on every text of the shape, out-of-range fields included', () => {
    const field = (max: number): fc.Arbitrary<number> => fc.integer({ min: 0, max });
    fc.assert(
      fc.property(
        fc.tuple(field(9999), field(99), field(99), field(99), field(99), field(99), field(999)),
        ([y, mo, d, h, mi, s, ms]) => {
          const text = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(ms, 3)}Z`;
          const fast = isoTime(text);
          // Either the fast path answers, and then as new Date does, or it leaves the text to new Date.
          if (!Number.isNaN(fast)) expect(fast).toBe(reference(text));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('leaves every other text to the general parser', () => {
    for (const text of [
      '2026-11-22T08:00:00Z',
      '2026-11-22T08:00:00.000+01:00',
      '2026-11-22 08:00:00.000Z',
      '2026-11-22T24:00:00.000Z',
      '0050-01-01T00:00:00.000Z',
      '2026-1a-22T08:00:00.000Z',
      '+002026-11-22T08:00:00.000Z',
      '',
    ]) {
      expect(isoTime(text)).toBeNaN();
    }
  });

  it('updatedAt written as createdAt is read once, into a Date of its own; any other is read itself', () => {
    const same = parseEmailLog(
      emailLogJson({ createdAt: '2026-11-22T08:00:00.123Z', updatedAt: '2026-11-22T08:00:00.123Z' }),
    );
    expect(same.updatedAt.getTime()).toBe(Date.UTC(2026, 10, 22, 8, 0, 0, 123));
    expect(same.updatedAt).not.toBe(same.createdAt);
    const later = parseEmailLog(
      emailLogJson({ createdAt: '2026-11-22T08:00:00.123Z', updatedAt: '2026-11-22T09:00:00+01:00' }),
    );
    expect(later.updatedAt.getTime()).toBe(Date.UTC(2026, 10, 22, 8));
    expect(() => parseEmailLog(emailLogJson({ updatedAt: 'soon' }))).toThrow(/updatedAt/);
    // Both broken: the first bad field in the record's order is the one named.
    expect(() => parseEmailLog(emailLogJson({ id: 'x', createdAt: 'x', updatedAt: 'x' }))).toThrow(
      /body\.id/,
    );
  });

  describe('through EmailService', () => {
    const app = useScriptedEmailApp({ scope: 'all', maxRetries: 0 });

    it('records carry the same instants whichever parser read them', async () => {
      const texts = [
        '2026-11-22T08:00:00.123Z', // fast path
        '2026-11-22T09:00:00+01:00', // general parser: same instant as the first, less 123 ms
        '2025-02-30T00:00:00.000Z', // rolls over to 2 March, as new Date does
      ];
      app.server.handle((_req, res) =>
        json(
          res,
          200,
          texts.map((t, i) => emailLogJson({ id: i + 1, createdAt: t, updatedAt: t, openedAt: t })),
        ),
      );
      const records = await app.email.list();
      expect(records.map((r) => r.createdAt.getTime())).toEqual(texts.map(reference));
      expect(records.map((r) => r.openedAt?.toISOString())).toEqual([
        '2026-11-22T08:00:00.123Z',
        '2026-11-22T08:00:00.000Z',
        '2025-03-02T00:00:00.000Z',
      ]);
    });

    it('a text neither parser reads is still refused, naming the field', async () => {
      app.server.handle((_req, res) =>
        json(res, 200, [emailLogJson({ createdAt: '2026-13-01T00:00:00.000Z' })]),
      );
      await expect(app.email.list()).rejects.toThrow(/createdAt/);
    });
  });
});
