import fc from 'fast-check';
import {
  ADDRESS_CRLF,
  ADDRESS_EMPTY,
  ADDRESS_HIDDEN,
  ADDRESS_INVALID,
  ADDRESS_OK,
  checkAddress,
} from '../../lib/validation/address.rules.js';
import { parseDateTime } from '../../lib/validation/schedule.rules.js';
import { base64DecodedLength } from '../../lib/validation/attachment.rules.js';

describe('checkAddress', () => {
  it.each([
    'a@example.com',
    'first.last+tag@sub.example.co.uk',
    "o'brien@example.ie",
    'x@xn--bcher-kva.example',
    'Jane Doe <jane@example.com>',
    'Jane<jane@example.com>',
    'J. R. Doe <jr@example.com>',
    '"Doe, Jane (Ops)" <jane@example.com>',
    '"Jane \\"JD\\" Doe" <jane@example.com>',
    '<jane@example.com>',
    'Zoë <zoë@bücher.example>',
    `${'a'.repeat(64)}@example.com`,
    `a@${'b'.repeat(63)}.com`,
  ])('accepts %s', (s) => expect(checkAddress(s)).toBe(ADDRESS_OK));

  it.each([
    'jane',
    'jane@',
    '@example.com',
    'jane@localhost',
    'jane@example.',
    'jane@.example.com',
    'jane@exa..mple.com',
    'jane@example-.com',
    'jane@[10.0.0.1]',
    'jane@1.2.3.4',
    '.jane@example.com',
    'ja..ne@example.com',
    '"jane"@example.com',
    'jane doe@example.com',
    ' jane@example.com',
    'jane@example.com ',
    'jane@exam\u00a0ple.com',
    'Jane <jane@example.com',
    'Jane jane@example.com>',
    'Jane < jane@example.com>',
    'Doe, Jane <jane@example.com>',
    'Jane@Home <jane@example.com>',
    '"Jane <jane@example.com>',
    '"Jane\\" <jane@example.com>',
    'A <a@example.com> <b@example.com>',
    'Tab\there <jane@example.com>',
    `${'a'.repeat(65)}@example.com`,
    `a@${'b'.repeat(64)}.com`,
    `a@${'b.'.repeat(126)}com`,
  ])('refuses %j', (s) => expect(checkAddress(s)).toBe(ADDRESS_INVALID));

  it('tells empty strings and line breaks apart', () => {
    expect(checkAddress('')).toBe(ADDRESS_EMPTY);
    for (const s of [
      'a@example.com\n',
      'a\r@example.com',
      'J\nD <a@example.com>',
      '"J\r" <a@example.com>',
      'x\n>',
    ]) {
      expect(checkAddress(s)).toBe(ADDRESS_CRLF);
    }
    expect(checkAddress('bad address\n')).toBe(ADDRESS_CRLF); // the line break wins over other faults
  });

  it('property: a hidden code point anywhere, in any shape, is refused as hidden (a line break still wins)', () => {
    // Every class the rule names: format (bidi override, zero-width, soft hyphen), C1 control,
    // private use, line and paragraph separators, lone surrogates.
    const hidden = fc.constantFrom(
      '\u202e',
      '\u2066',
      '\u200b',
      '\u00ad',
      '\u0085',
      '\ue000',
      '\u2028',
      '\u2029',
    );
    const piece = fc.constantFrom(
      'a',
      'Z',
      '0',
      '.',
      '-',
      '@',
      ' ',
      '"',
      '\\',
      '<',
      '>',
      ',',
      'é',
      'ü',
      'ß',
      '\n',
    );
    const text = fc.array(piece, { maxLength: 12 }).map((p) => p.join(''));
    const shaped = fc.oneof(
      text.map((t) => `${t}@example.com`),
      fc.tuple(text, text).map(([n, a]) => `${n} <${a}@example.com>`),
      fc.tuple(text, text).map(([n, a]) => `"${n}" <${a}@example.com>`),
      text,
    );
    fc.assert(
      fc.property(shaped, hidden, fc.nat(), fc.boolean(), (base, h, at, lone) => {
        const mark = lone ? '\ud800' : h; // a high surrogate with no low one after it
        const i = at % (base.length + 1);
        const s = base.slice(0, i) + mark + (lone ? 'x' : '') + base.slice(i);
        const lineBreak = s.includes('\n') || s.includes('\r');
        expect(checkAddress(s)).toBe(lineBreak ? ADDRESS_CRLF : ADDRESS_HIDDEN);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('parseDateTime', () => {
  it.each([
    ['2030-01-31T09:00:00Z', Date.UTC(2030, 0, 31, 9)],
    ['2030-01-31t09:00:00z', Date.UTC(2030, 0, 31, 9)],
    ['2030-01-31T10:30:00+01:30', Date.UTC(2030, 0, 31, 9)],
    ['2030-01-31T04:00:00-05:00', Date.UTC(2030, 0, 31, 9)],
    ['2030-01-31T09:00:00.5Z', Date.UTC(2030, 0, 31, 9, 0, 0, 500)],
    ['2030-01-31T09:00:00.123456789Z', Date.UTC(2030, 0, 31, 9, 0, 0, 123)],
    ['2028-02-29T00:00:00Z', Date.UTC(2028, 1, 29)],
    ['0001-01-01T00:00:00Z', Date.parse('0001-01-01T00:00:00Z')],
  ])('reads %s', (text, ms) => expect(parseDateTime(text)).toBe(ms));

  it.each([
    '2030-01-31',
    '2030-01-31T09:00Z',
    '2030-01-31T09:00:00',
    '2030-01-31 09:00:00Z',
    '2030-1-31T09:00:00Z',
    '2030-01-31T09:00:00.Z',
    '2030-01-31T09:00:00+0100',
    '2030-01-31T09:00:00+24:00',
    '2030-01-31T24:00:00Z',
    '2030-01-31T09:60:00Z',
    '2030-01-31T09:00:60Z',
    '2029-02-29T00:00:00Z',
    '2030-04-31T00:00:00Z',
    '2030-13-01T00:00:00Z',
    '2030-01-31T09:00:00Zjunk',
    'Thu, 31 Jan 2030 09:00:00 GMT',
  ])('refuses %s', (text) => expect(parseDateTime(text)).toBeNaN());
});

describe('base64DecodedLength', () => {
  it.each([
    ['', -1],
    ['YQ==', 1],
    ['YWI=', 2],
    ['YWJj', 3],
    ['YQ=', -1],
    ['YQ', -1],
    ['Y===', -1],
    ['=YQ=', -1],
    ['YW Jj', -1],
    ['YW-_', -1],
    ['YWJj\n', -1],
    ['YWJ\u00e9', -1],
  ])('%j -> %d', (text, size) => expect(base64DecodedLength(text)).toBe(size));
});
