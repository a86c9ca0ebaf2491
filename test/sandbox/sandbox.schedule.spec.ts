import { EmailSandbox } from '../../lib/testing/index.js';
import { inline, RawClient } from './sandbox.client.js';
import { useMailbox, useSandbox } from '../support/sandbox.js';

const START = Date.parse('2030-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(START + ms).toISOString();

// One sandbox for the file, its clock frozen; the running-clock spec uses a mailbox (its own clock).
const server = useSandbox({ clock: { start: START, frozen: true } });

describe('EmailSandbox scheduling and clock', () => {
  let sandbox: EmailSandbox;
  const client = new RawClient(() => sandbox);

  beforeAll(() => {
    sandbox = server;
  });
  beforeEach(() => sandbox.reset());
  afterAll(() => client.close());

  it('stamps records with the sandbox clock', async () => {
    const res = await client.send(inline());
    expect(res.json.createdAt).toBe(at(0));
    expect(sandbox.clock.now()).toBe(START);
  });

  it('keeps a future message scheduled until the clock passes scheduledAt, then it is sent', async () => {
    const res = await client.send(inline({ scheduledAt: at(3_600_000) }));
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      status: 'scheduled',
      scheduledAt: at(3_600_000),
      providerEmailId: null,
    });
    sandbox.clock.advance(3_599_000);
    expect((await client.call('GET', `/emails/${res.json.id}`)).json.status).toBe('scheduled');
    sandbox.clock.advance(1000);
    const later = await client.call('GET', `/emails/${res.json.id}`);
    expect(later.json.status).toBe('sent');
    expect(later.json.providerEmailId).not.toBeNull();
    expect(later.json.updatedAt).toBe(at(3_600_000));
    expect(sandbox.message(res.json.id)?.status).toBe('sent');
  });

  it('sends at once when scheduledAt is in the past', async () => {
    const res = await client.send(inline({ scheduledAt: at(-60_000) }));
    expect(res.json.status).toBe('sent');
    expect(res.json.scheduledAt).toBe(at(-60_000));
  });

  it('normalises scheduledAt to UTC', async () => {
    const res = await client.send(inline({ scheduledAt: '2030-03-01T15:00:00+02:00' }));
    expect(res.json.scheduledAt).toBe('2030-03-01T13:00:00.000Z');
  });

  it('measures the 30-day horizon on the sandbox clock', async () => {
    const day = 86_400_000;
    expect((await client.send(inline({ scheduledAt: at(30 * day) }))).status).toBe(201);
    expect((await client.send(inline({ scheduledAt: at(30 * day + 1) }))).status).toBe(400);
  });

  it('sends due messages when the clock is set past them, and only those', async () => {
    const a = await client.send(inline({ scheduledAt: at(60_000) }));
    const b = await client.send(inline({ scheduledAt: at(120_000) }));
    sandbox.clock.set(new Date(START + 90_000));
    expect(sandbox.message(a.json.id)?.status).toBe('sent');
    expect(sandbox.message(b.json.id)?.status).toBe('scheduled');
  });

  it('restarts the clock on reset()', () => {
    sandbox.clock.advance(5000);
    sandbox.reset();
    expect(sandbox.clock.now()).toBe(START);
  });
});

describe('EmailSandbox running clock (a mailbox of the frozen sandbox has a running clock of its own)', () => {
  const mailbox = useMailbox(server);

  it('follows the real time, shifted by advance()', async () => {
    const before = Date.now();
    const serverNow = server.clock.now();
    mailbox.clock.advance(86_400_000);
    const shifted = mailbox.clock.now() - Date.now();
    expect(Math.abs(shifted - 86_400_000)).toBeLessThan(60_000); // a day ahead, a busy minute of slack
    expect(mailbox.clock.now()).toBeGreaterThan(before);
    expect(server.clock.now()).toBe(serverNow); // the sandbox's frozen clock did not move
  });
});
