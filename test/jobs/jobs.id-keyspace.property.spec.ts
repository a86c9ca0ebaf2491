import fc from 'fast-check';
import { ENGINES, lookAlike, sleep, templated, useEngine } from './jobs.support.js';

/**
 * Issue 50, item 1: a job id is the user's (often from user input), so no id may reach into the keys an engine
 * keeps for itself. BullMQ keeps a queue's own state beside its jobs (`<prefix>:<queue>:wait`, `:meta`, `:id`,
 * ...), and a job's keys are `<prefix>:<queue>:<id>` plus suffixes (`:lock`, `:logs`); pg-boss keeps each job as a
 * row keyed by a UUID. Job ids are drawn here from those words, the separators the engines use, and odd
 * characters, alone and combined: each is one job with one email, and an ordinary job sent after all of them still
 * goes out (a queue whose `wait` list or `meta` hash was overwritten sends nothing more).
 */

/** Words the engines keep under a queue's prefix (BullMQ 5 and 6's queue keys, a job's own key suffixes, ours). */
const ENGINE_WORDS = [
  'wait',
  'waiting',
  'waiting-children',
  'paused',
  'meta',
  'id',
  'delayed',
  'prioritized',
  'active',
  'completed',
  'failed',
  'stalled',
  'stalled-check',
  'repeat',
  'limiter',
  'events',
  'pc',
  'marker',
  'de',
  'metrics',
  'lock',
  'logs',
  'dependencies',
  'processed',
  'unsuccessful',
  'email-job',
  'job',
  'archive',
  'queue',
  'email',
  'bull',
] as const;

const SEPARATORS = [
  ':',
  '::',
  '/',
  '.',
  '-',
  '_',
  '|',
  ' ',
  '%',
  '%3A',
  '%25',
  '@',
  '#',
  '{',
  '}',
  '*',
] as const;

/** Characters that are valid in a job id but unusual: quotes, escapes, SQL and glob signs, a digit, non-ASCII. */
const ODD = [
  '"',
  "'",
  '\\',
  '$1',
  '?',
  '[x]',
  '0',
  '42',
  '-1',
  '1e3',
  '0x1F',
  'é',
  'ß',
  '日本',
  '😀',
  '\u2028',
] as const;

const token = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ENGINE_WORDS) },
  { weight: 2, arbitrary: fc.constantFrom(...SEPARATORS) },
  { weight: 2, arbitrary: fc.constantFrom(...ODD) },
);
const jobIdArb = fc.array(token, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));

/** Every engine word alone, then look-alike combinations, the same for both engines (fixed seed). */
function jobIds(): string[] {
  const drawn = fc.sample(jobIdArb, { numRuns: 40, seed: 50_1 });
  const ids = [...ENGINE_WORDS, ...ENGINE_WORDS.map((w) => `${w}:lock`), ...drawn];
  return [...new Set(ids)];
}

describe.each(ENGINES)('job ids from the %s engine’s own key space', (name) => {
  const engine = useEngine(name);

  it('each id is one job and one email; an ordinary job after them is still sent', async () => {
    const app = await engine.app({ concurrency: 8 });
    const ids = jobIds();
    // look-alike mail (one sender, recipient and subject), a body of its own per id; every fifth a template
    const bodyOf = (i: number) => `Message ${i} for the id ${JSON.stringify(ids[i])}`;
    const inputOf = (i: number) => (i % 5 === 4 ? templated(`T-${i}`) : lookAlike(bodyOf(i)));
    const receipts = await app.jobs.sendMany(
      ids.map((jobId, i) => ({ input: inputOf(i), options: { jobId } })),
    );
    expect(receipts.map((r) => r.jobId)).toEqual(ids);
    // the same id again with the same input is the same job; each id's key is its own
    const again = await app.jobs.send(inputOf(0), { jobId: ids[0] });
    expect(again).toEqual(receipts[0]);
    expect(new Set(receipts.map((r) => r.idempotencyKey)).size).toBe(ids.length);

    for (const [i, jobId] of ids.entries()) {
      const record = await app.jobs.waitFor(jobId, { timeoutMs: 30_000 });
      if (i % 5 !== 4) expect(record.subject).toBe('Your order');
      expect(await app.jobs.status(jobId)).toMatchObject({ jobId, state: 'sent', messageId: record.id });
    }
    const after = await app.jobs.send(lookAlike('An ordinary job after them'), {
      jobId: 'after-the-odd-ids',
    });
    await app.jobs.waitFor(after.jobId, { timeoutMs: 30_000 });

    await sleep(1500); // the workers had time to send anything twice
    const bodies = engine.sandbox.messages().map((m) => m.bodyText);
    for (const [i] of ids.entries()) {
      const expected = i % 5 === 4 ? `Order T-${i} is on its way, Ada` : bodyOf(i);
      expect([i, bodies.filter((b) => b === expected).length]).toEqual([i, 1]);
    }
    expect(bodies.filter((b) => b === 'An ordinary job after them')).toHaveLength(1);
    expect(engine.sandbox.messages()).toHaveLength(ids.length + 1);
  }, 120_000);

  it('an id that is an engine word does not stop later jobs written one by one', async () => {
    const app = await engine.app({ concurrency: 2 });
    for (const word of ['wait', 'delayed', 'active', 'marker', 'meta', 'id']) {
      const { jobId } = await app.jobs.send(lookAlike(`The word ${word}`), { jobId: word });
      await app.jobs.waitFor(jobId, { timeoutMs: 20_000 });
      const next = await app.jobs.send(lookAlike(`After ${word}`), { jobId: `after-${word}` });
      await app.jobs.waitFor(next.jobId, { timeoutMs: 20_000 });
    }
    expect(engine.sandbox.messages()).toHaveLength(12);
  }, 120_000);
});
