import { EmailError, EmailSendUncertainError, type EmailService } from '../../lib/index.js';
import { EmailSandbox, type SandboxRandomFaults } from '../../lib/testing/index.js';
import { emailApp } from '../support/email-app.js';
import { useSandbox } from '../support/sandbox.js';

// The small version of `npm run chaos` (test/bench/chaos.js): every fault kind on every route, and
// look-alike mail (three subjects, two recipients, a body of its own per send), checked by body.
const SENDS = 200;
const CONCURRENCY = 16;
const MODES: SandboxRandomFaults['modes'] = [
  'delay',
  'drop-before',
  'drop-after',
  'fail-after',
  { mode: 'status', status: 429, retryAfter: 0 },
  { mode: 'status', status: 409 },
  { mode: 'status', status: 500 },
  { mode: 'status', status: 502 },
  { mode: 'status', status: 503 },
];

type Result = { kind: 'sent'; id: number } | { kind: 'not-sent' | 'uncertain' };

async function chaos(email: EmailService, sandbox: EmailSandbox, seed: number) {
  sandbox.reset();
  sandbox.faults.random({ probability: 0.2, seed, modes: MODES });
  const results: Result[] = new Array(SENDS);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < SENDS) {
      const i = next++;
      const input = {
        from: 'app@example.com',
        to: [`u${i % 2}@example.com`],
        subject: ['Your login code', 'Your receipt', 'Your order has shipped'][i % 3],
        text: `Send #${i}`,
      };
      try {
        results[i] = { kind: 'sent', id: (await email.send(input)).id };
      } catch (err) {
        if (err instanceof EmailSendUncertainError) results[i] = { kind: 'uncertain' };
        else if (err instanceof EmailError) results[i] = { kind: err.outcome ?? 'uncertain' };
        else throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const faults = sandbox.faults.injected;
  sandbox.faults.clear();
  const held = new Map<number, number[]>();
  const owner = new Map<number, number>();
  for (const m of sandbox.messages()) {
    const i = Number(/#(\d+)$/.exec(m.bodyText ?? '')?.[1]);
    held.set(i, [...(held.get(i) ?? []), m.id]);
    owner.set(m.id, i);
  }
  let duplicates = 0;
  let lost = 0;
  let wrongRecord = 0;
  let uncertain = 0;
  results.forEach((r, i) => {
    const ids = held.get(i) ?? [];
    if (ids.length > 1) duplicates++;
    if (r.kind === 'sent' && owner.get(r.id) !== i) wrongRecord++;
    if (r.kind === 'sent' && ids.length === 0) lost++;
    if (r.kind === 'not-sent' && ids.length > 0) lost++;
    if (r.kind === 'uncertain') uncertain++;
  });
  return {
    faults,
    duplicates,
    lost,
    wrong_record: wrongRecord,
    uncertain,
    messages: sandbox.messages().length,
  };
}

describe('chaos: 200 sends through 20% faults of every kind', () => {
  const sandbox = useSandbox({ maxRequestLog: 10 });
  let email: EmailService;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ email, close } = await emailApp({
      baseUrl: sandbox.baseUrl,
      apiKey: sandbox.apiKey,
      timeoutMs: 15_000,
    }));
  });
  afterAll(async () => {
    await close();
  });

  it.each([7, 2026])('seed %i: no duplicate, nothing lost, few left uncertain', async (seed) => {
    const figures = await chaos(email, sandbox, seed);
    expect(figures.faults).toBeGreaterThan(30); // the faults really happened
    expect(figures.duplicates).toBe(0);
    expect(figures.lost).toBe(0);
    expect(figures.wrong_record).toBe(0);
    expect(figures.uncertain).toBeLessThanOrEqual(8);
    expect(figures.messages).toBeGreaterThanOrEqual(SENDS - figures.uncertain);
  });
});
