import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { packPackageCached, type PackedPackage } from './consumer.pack.js';

/** Set EMAIL_SKIP_CONSUMER=1 to skip the consumer specs in a quick local run. */
export const consumerSuite = process.env.EMAIL_SKIP_CONSUMER === '1' ? describe.skip : describe;

/** How long a spec file waits for the pack another file is building (a build under load takes ~1 min). */
const PACK_WAIT_MS = 300_000;

/**
 * The run's consumer work directory: made by Jest's global set-up (`test/support/jest.global-setup.mjs`,
 * `EMAIL_CONSUMER_DIR`) and removed by its tear-down, so that the spec files of one run, in either
 * worker, share it; a fresh one when a spec runs outside that set-up.
 */
export function consumerWorkDir(): string {
  const dir = process.env.EMAIL_CONSUMER_DIR;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    return dir;
  }
  return (process.env.EMAIL_CONSUMER_DIR = mkdtempSync(join(tmpdir(), 'nte-consumer-')));
}

/**
 * The package packed once per run (or taken from an earlier run's pack of the same sources:
 * `packPackageCached`), whichever consumer spec file asks first: the first takes the lock
 * (`pack.lock`, made with an atomic mkdir) and packs; the others wait for `packed.json` (or the first
 * one's `pack-failed.txt`, to fail with its reason).
 */
export async function sharedPack(workDir = consumerWorkDir()): Promise<PackedPackage> {
  const done = join(workDir, 'packed.json');
  const failed = join(workDir, 'pack-failed.txt');
  let mine = false;
  try {
    mkdirSync(join(workDir, 'pack.lock'));
    mine = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (mine) {
    try {
      const packed = await packPackageCached(workDir);
      writeFileSync(`${done}.tmp`, JSON.stringify(packed));
      renameSync(`${done}.tmp`, done);
      return packed;
    } catch (err) {
      writeFileSync(failed, String((err as Error).message));
      throw err;
    }
  }
  for (const until = Date.now() + PACK_WAIT_MS; Date.now() < until; await sleep(250)) {
    if (existsSync(done)) return JSON.parse(readFileSync(done, 'utf8')) as PackedPackage;
    if (existsSync(failed))
      throw new Error(`the pack failed in another spec file:\n${readFileSync(failed, 'utf8')}`);
  }
  throw new Error(`no pack in ${workDir} after ${PACK_WAIT_MS} ms`);
}

/**
 * Starts independent checks of one app `limit` at a time (two cores: more would only slow each down)
 * and hands each test the promise of its own check, so a failure is reported by the test it belongs to.
 */
export function startChecks<K extends string, T>(
  checks: Record<K, () => Promise<T>>,
  limit = 2,
): Record<K, Promise<T>> {
  const queue = Object.entries(checks) as Array<[K, () => Promise<T>]>;
  const results = {} as Record<K, Promise<T>>;
  const starters: Array<() => void> = [];
  let running = 0;
  const next = (): void => {
    while (running < limit && starters.length > 0) {
      running++;
      starters.shift()!();
    }
  };
  for (const [name, check] of queue) {
    results[name] = new Promise<T>((resolve, reject) => {
      starters.push(() => {
        check()
          .then(resolve, reject)
          .finally(() => {
            running--;
            next();
          });
      });
    });
    // a check whose test is skipped (e.g. with -t) must not become an unhandled rejection
    results[name].catch(() => undefined);
  }
  next();
  return results;
}
