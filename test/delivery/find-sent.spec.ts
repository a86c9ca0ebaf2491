import { EmailValidationError, FIND_SENT_SKEW_MS } from '../../lib/index.js';
import { addressOf, matchesSent, pickSent, sentCriteria } from '../../lib/delivery/find-sent.matcher.js';
import { ClaimedRecords } from '../../lib/delivery/claimed-records.store.js';
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

  it('picks the earliest match in any order, and skips what it is told to', () => {
    const later = new Date(since.getTime() + 1000);
    const records = [
      logFor({ id: 5, createdAt: later }),
      logFor({ id: 3 }),
      logFor({ id: 4, subject: 'x' }),
      logFor({ id: 2 }),
    ];
    expect(pickSent(records, criteria)?.id).toBe(2);
    expect(pickSent(records, criteria, (r) => r.id === 2)?.id).toBe(3);
    expect(pickSent(records, criteria, (r) => r.id !== 5)?.id).toBe(5);
    expect(pickSent(records, criteria, () => true)).toBeNull();
    expect(pickSent([], criteria)).toBeNull();
  });

  it('the claimed-records registry knows a record by id and creation time, and is bounded', () => {
    const claimed = new ClaimedRecords(3);
    for (const id of [1, 2, 3, 2, 4]) claimed.claim(logFor({ id }));
    expect([1, 2, 3, 4].map((id) => claimed.has(logFor({ id })))).toEqual([false, true, true, true]);
    expect(claimed.has(logFor({ id: 4, createdAt: new Date(since.getTime() + 1) }))).toBe(false);
  });
});

describe('EmailService.findSent', () => {
  const app = useScriptedEmailApp({ defaultFrom: 'app@example.com' });

  it('asks for 100 records and returns the match, with defaultFrom applied', async () => {
    const at = (ms: number) => ({ createdAt: new Date(ms).toISOString() });
    const now = Date.now();
    const seen = script(app.server, [], () => [
      recordFor(8, at(now + 10)),
      recordFor(6, at(now - 3_600_000)),
      recordFor(7, at(now)),
    ]);
    const started = new Date(now - 1000);
    const found = await app.email.findSent(
      { to: ['ada@example.com'], subject: 'Order 1', text: 'x' },
      { since: started },
    );
    expect(found?.id).toBe(7);
    expect(found?.createdAt).toBeInstanceOf(Date);
    expect(seen.order()).toEqual(['GET /emails?limit=100']);
    expect(await app.email.findSent(input, { since: new Date(Date.now() + 60_000) })).toBeNull();
  });

  it('retries its read like any other', async () => {
    let n = 0;
    app.server.handle((req, res) => {
      if (n++ === 0) return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify([recordFor(3)]));
    });
    expect((await app.email.findSent(input, { since: new Date(Date.now() - 1000) }))?.id).toBe(3);
    expect(app.server.requests).toHaveLength(2);
  });

  it('refuses a missing since or an input it cannot match, before any request', async () => {
    const err = (await failure(app.email.findSent({ to: [] } as never, {} as never))) as EmailValidationError;
    expect(err).toBeInstanceOf(EmailValidationError);
    expect(err.issues.map((i) => i.path).sort()).toEqual(['since', 'subject', 'to']);
    await failure(app.email.findSent(input, { since: new Date('nope') }));
    expect(app.server.requests).toHaveLength(0);
  });
});
