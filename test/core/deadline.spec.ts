import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { raceDeadline, settledBy, withTimeout } from '../../lib/time/clock.helpers.js';

// The module's one deadline race (time/clock.helpers.ts): the job layer's store calls, the engines' closes,
// the health probes, the rate limiter's Redis and the account resolver all end through it.

const never = new Promise<never>(() => undefined);

describe('raceDeadline, withTimeout, settledBy', () => {
  it('gives the promise when it comes first, and what `late` gives or throws when the time is up first', async () => {
    expect(await raceDeadline(Promise.resolve('answer'), 60_000, () => 'late')).toBe('answer');
    expect(await raceDeadline(never, 1, () => 'late')).toBe('late');
    const refused = new Error('the store did not answer');
    await expect(
      raceDeadline(never, 1, () => {
        throw refused;
      }),
    ).rejects.toBe(refused);
    await expect(
      raceDeadline(Promise.reject(new Error('own failure')), 60_000, () => 'late'),
    ).rejects.toThrow('own failure');
  });

  it('withTimeout names what took too long; settledBy never rejects', async () => {
    await expect(withTimeout(never, 5, 'PostgreSQL')).rejects.toThrow('PostgreSQL took longer than 5 ms');
    expect(await withTimeout(Promise.resolve(7), 60_000, 'Redis')).toBe(7);
    expect(await settledBy(Promise.reject(new Error('closed badly')), Date.now() + 60_000)).toBe(true);
    expect(await settledBy(never, Date.now() + 5)).toBe(false);
    expect(await settledBy(never, Date.now() - 1_000)).toBe(false); // a deadline already passed
  });

  it('a promise that fails after its deadline is nobody’s unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let fail!: (err: Error) => void;
      const slow = new Promise<never>((_, reject) => (fail = reject));
      await expect(withTimeout(slow, 1, 'Redis')).rejects.toThrow('took longer');
      expect(await settledBy(slow, Date.now() + 1)).toBe(false);
      fail(new Error('too late'));
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it("settledBy's wait never keeps a process alive: a process waiting on it for a minute ends at once", async () => {
    const root = process.cwd();
    const helpers = pathToFileURL(join(root, 'lib/time/clock.helpers.ts')).href;
    const register = pathToFileURL(join(root, 'test/nest/support/ts-esm.register.mjs')).href;
    const script = `const { settledBy } = await import(${JSON.stringify(helpers)});
      settledBy(new Promise(() => {}), Date.now() + 60_000).then((ok) => console.log('settled', ok));
      console.log('waiting');`;
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    // Were the timer to hold the process, it would end after 60 s: past this test's timeout.
    const out = await new Promise<string>((done, fail) =>
      execFile(
        process.execPath,
        ['--import', register, '--input-type=module', '-e', script],
        { env, timeout: 60_000 },
        (err, stdout) => (err ? fail(err) : done(stdout)),
      ),
    );
    expect(out.trim()).toBe('waiting');
  });
});
