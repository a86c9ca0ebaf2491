import { EmailValidationError } from '../../lib/index.js';
import { FIND_SENT_SKEW_MS } from '../../lib/delivery/find-sent.policy.js';
import {
  addressOf,
  contentMatches,
  lookAlikes,
  matchesSent,
  SentLookup,
  sentCriteria,
} from '../../lib/delivery/find-sent.policy.js';
import type { EmailDetail } from '../../lib/index.js';
import { useScriptedEmailApp } from '../support/email-app.js';
import { failure, input, logFor, recordFor, script } from './delivery.support.js';

const since = logFor().createdAt; // `logFor` records are created at `since` unless they say otherwise

describe('find-sent matcher', () => {
  const criteria = sentCriteria(input, since);

  it('reads the address out of "Name <addr>", without case', () => {
    expect(addressOf('Shop <App@Example.com>')).toBe('app@example.com');
    expect(addressOf('  Ada@Example.COM ')).toBe('ada@example.com');
    expect(addressOf('"A <b>" <c@example.com>')).toBe('c@example.com');
  });

  it('matches sender and recipients by address, the subject exactly, and the time with the skew allowance', () => {
    expect(matchesSent(logFor(), criteria)).toBe(true);
    expect(matchesSent(logFor({ fromAddress: 'Shop <APP@example.com>' }), criteria)).toBe(true);
    expect(matchesSent(logFor({ toAddresses: ['ADA@example.com', 'ada@example.com'] }), criteria)).toBe(true);
    expect(matchesSent(logFor({ createdAt: new Date(since.getTime() - FIND_SENT_SKEW_MS) }), criteria)).toBe(
      true,
    );
    expect(
      matchesSent(logFor({ createdAt: new Date(since.getTime() - FIND_SENT_SKEW_MS - 1) }), criteria),
    ).toBe(false);
    expect(matchesSent(logFor({ subject: 'order 1' }), criteria)).toBe(false);
    expect(matchesSent(logFor({ fromAddress: 'shop@example.com' }), criteria)).toBe(false);
    expect(matchesSent(logFor({ toAddresses: ['bob@example.com'] }), criteria)).toBe(false);
    expect(matchesSent(logFor({ toAddresses: ['ada@example.com', 'bob@example.com'] }), criteria)).toBe(
      false,
    );
  });

  it('in template mode, ignores the subject (the rendered one is not known)', () => {
    const templated = sentCriteria(
      { from: 'app@example.com', to: ['ada@example.com'], templateId: 3, variables: {} },
      since,
    );
    expect(matchesSent(logFor({ subject: 'Welcome, Ada' }), templated)).toBe(true);
    expect(matchesSent(logFor({ toAddresses: ['bob@example.com'] }), templated)).toBe(false);
  });

  it('lists every look-alike earliest first, in any order, and skips what it is told to', () => {
    const later = new Date(since.getTime() + 1000);
    const records = [
      logFor({ id: 5, createdAt: later }),
      logFor({ id: 3 }),
      logFor({ id: 4, subject: 'x' }),
      logFor({ id: 2 }),
    ];
    const ids = (skip?: (r: { id: number }) => boolean) =>
      lookAlikes(records, criteria, skip).map((r) => r.id);
    expect(ids()).toEqual([2, 3, 5]);
    expect(ids((r) => r.id === 2)).toEqual([3, 5]);
    expect(ids(() => true)).toEqual([]);
    expect(lookAlikes([], criteria)).toEqual([]);
  });

  it("reads a send's email back from the bytes it sent, matching as its input does", () => {
    // A send's look-up is given its body (the snapshot is not kept while the request runs).
    const email = { ...input, html: '<p>Hello "Ada" \u00e9\n</p>' };
    const fromBody = new SentLookup(JSON.stringify(email), since.getTime());
    const fromInput = new SentLookup(email, since.getTime());
    expect(fromBody.criteria()).toEqual(fromInput.criteria());
    expect(fromBody.signature()).toBe(fromInput.signature());
    const own = { ...logFor(), html: email.html, bodyText: email.text };
    expect(fromBody.carries(own)).toBe(true);
    expect(fromBody.carries({ ...own, bodyText: 'Bye' })).toBe(false);
    expect(fromBody.provable()).toBe(true);
    const templated = { from: 'a@example.com', to: ['ada@example.com'], templateId: 3, variables: {} };
    expect(new SentLookup(JSON.stringify(templated), since.getTime()).provable()).toBe(false);
  });

  describe('content proof', () => {
    const detail = (over: Partial<EmailDetail>): EmailDetail => ({
      ...logFor(),
      html: null,
      bodyText: null,
      ...over,
    });
    const inline = { from: 'a@example.com', to: ['ada@example.com'], subject: 'Your code' };

    it('text must be the same (line ends and blanks aside); another body never matches', () => {
      const mine = { ...inline, text: 'Your code is 1234' };
      expect(contentMatches(detail({ bodyText: 'Your code is 1234' }), mine)).toBe(true);
      expect(contentMatches(detail({ bodyText: ' Your code\r\nis  1234\n' }), mine)).toBe(true);
      expect(contentMatches(detail({ bodyText: 'Your code is 4321' }), mine)).toBe(false);
      expect(contentMatches(detail({ bodyText: null, html: 'Your code is 1234' }), mine)).toBe(false);
    });

    it('html exactly when the record has no tracking; with tracking, its pixel and link targets set aside', () => {
      const mine = { ...inline, html: '<p>Code <b>1234</b> <a href="https://x.test/a?t=1">open</a></p>' };
      expect(contentMatches(detail({ html: mine.html }), mine)).toBe(true);
      expect(contentMatches(detail({ html: mine.html.replace('1234', '9999') }), mine)).toBe(false);
      const tracked =
        '<p>Code <b>1234</b> <a href="https://t.test/c/0">open</a></p><img src="https://t.test/o.gif">';
      expect(contentMatches(detail({ html: tracked }), mine)).toBe(false); // untracked record: exact
      expect(contentMatches(detail({ html: tracked, trackOpens: true, trackClicks: true }), mine)).toBe(true);
      const other = tracked.replace('1234', '5678');
      expect(contentMatches(detail({ html: other, trackOpens: true, trackClicks: true }), mine)).toBe(false);
    });

    it('both bodies must match when the input has both', () => {
      const mine = { ...inline, html: '<p>A</p>', text: 'A' };
      expect(contentMatches(detail({ html: '<p>A</p>', bodyText: 'A' }), mine)).toBe(true);
      expect(contentMatches(detail({ html: '<p>A</p>', bodyText: 'B' }), mine)).toBe(false);
      expect(contentMatches(detail({ html: '<p>B</p>', bodyText: 'A' }), mine)).toBe(false);
    });

    it('a template send is never proven by content', () => {
      const templated = {
        from: 'a@example.com',
        to: ['ada@example.com'],
        templateId: 3,
        variables: { code: '1' },
      };
      expect(contentMatches(detail({ html: '<p>1</p>', bodyText: '1' }), templated)).toBe(false);
    });
  });
});

describe('EmailService.findSent', () => {
  const app = useScriptedEmailApp({ defaultFrom: 'app@example.com' });

  it('asks for 100 records, reads the look-alike, and returns the proven match, with defaultFrom applied', async () => {
    const at = (ms: number) => ({ createdAt: new Date(ms).toISOString() });
    const now = Date.now();
    const seen = script(app.server, [], () => [
      recordFor(8, at(now + 10)),
      recordFor(6, at(now - 3_600_000)),
      recordFor(7, { ...at(now), bodyText: 'x' }),
    ]);
    const started = new Date(now - 1000);
    const found = await app.email.findSent(
      { to: ['ada@example.com'], subject: 'Order 1', text: 'x' },
      { since: started },
    );
    expect(found.certainty).toBe('proven');
    expect(found.record?.id).toBe(7);
    expect(found.record?.createdAt).toBeInstanceOf(Date);
    expect(seen.order().sort()).toEqual(['GET /emails/7', 'GET /emails/8', 'GET /emails?limit=100']);
    const none = await app.email.findSent(input, { since: new Date(Date.now() + 60_000) });
    expect(none).toEqual({ record: null, certainty: 'none', candidates: [], held: [] });
  });

  it('retries its read like any other', async () => {
    let n = 0;
    app.server.handle((req, res) => {
      if (n++ === 0) return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.url.endsWith('/3') ? recordFor(3) : [recordFor(3)]));
    });
    expect((await app.email.findSent(input, { since: new Date(Date.now() - 1000) })).record?.id).toBe(3);
    expect(app.server.requests.map((r) => r.url)).toEqual([
      '/emails?limit=100',
      '/emails?limit=100',
      '/emails/3',
    ]);
  });

  it('refuses a missing since or an input it cannot match, before any request', async () => {
    const err = (await failure(app.email.findSent({ to: [] } as never, {} as never))) as EmailValidationError;
    expect(err).toBeInstanceOf(EmailValidationError);
    expect(err.issues.map((i) => i.path).sort()).toEqual(['since', 'subject', 'to']);
    await failure(app.email.findSent(input, { since: new Date('nope') }));
    expect(app.server.requests).toHaveLength(0);
  });
});
