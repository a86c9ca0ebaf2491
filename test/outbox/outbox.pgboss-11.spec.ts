// The outbox on pg-boss 11 (the peer range admits 10 to 12; the devDependency is 10). pg-boss 11 is installed
// beside it as `pg-boss-11`; a process whose library resolves `pg-boss` to it runs one app through a fixed
// scenario (test/outbox/support/outbox-probe.child.mjs) against this spec's PostgreSQL and sandbox. pg-boss 12
// is an ES module that `require` loads from Node 22.12 only, so it cannot run here.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SANDBOX_OPTIONS } from '../jobs/jobs.support.js';
import { freshSchema, posts, useOutboxWorld } from './outbox.support.js';

const ROOT = process.cwd();
const world = useOutboxWorld(SANDBOX_OPTIONS);

/**
 * A folder whose `node_modules` links every package of this project's, but `pg-boss` to `pg-boss-11`, and a
 * copy of `lib/`: the copy's imports of pg-boss resolve to version 11.
 */
function pgBoss11Folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-pgboss11-'));
  const modules = join(ROOT, 'node_modules');
  const linked = join(dir, 'node_modules');
  cpSync(join(ROOT, 'lib'), join(dir, 'lib'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  mkdirSync(linked);
  for (const name of readdirSync(modules)) {
    if (name === 'pg-boss' || name.startsWith('.')) continue;
    if (name === 'pg-boss-11') symlinkSync(join(modules, name), join(linked, 'pg-boss'), 'dir');
    else symlinkSync(join(modules, name), join(linked, name), 'dir');
  }
  return dir;
}

/** Runs the probe with the library in `dir`; its JSON lines by step. */
async function probe(dir: string, schema: string): Promise<Map<string, Record<string, unknown>>> {
  const register = join(ROOT, 'test/nest/support/ts-esm.register.mjs');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: world.postgres.url,
    EMAIL_BASE_URL: world.sandbox.baseUrl,
    EMAIL_API_KEY: world.sandbox.apiKey,
    OUTBOX_SCHEMA: schema,
  };
  delete env.NODE_OPTIONS;
  const child = spawn(
    process.execPath,
    [
      '--import',
      pathToFileURL(register).href,
      join(ROOT, 'test/outbox/support/outbox-probe.child.mjs'),
      pathToFileURL(join(dir, 'lib')).href,
      'ts',
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const steps = new Map<string, Record<string, unknown>>();
  for (const line of out.split('\n').filter(Boolean)) {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    steps.set(String(parsed.step), parsed);
  }
  if (code !== 0) throw new Error(`the probe exited ${code}: ${JSON.stringify([...steps.values()])} ${err}`);
  return steps;
}

describe('the outbox on pg-boss 11 (real PostgreSQL)', () => {
  let dir: string;
  beforeAll(() => {
    dir = pgBoss11Folder();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a sendMany in the app transaction, sends each job once, moves and cancels, and indexes its fetch', async () => {
    const schema = freshSchema();
    const steps = await probe(dir, schema);
    expect(String(steps.get('pg-boss')?.version)).toMatch(/^11\./);
    expect(steps.get('written')).toEqual({
      step: 'written',
      jobIds: ['p:a', 'p:b', 'p:a-again', 'p:t', 'p:later', 'p:a'],
      sameKeyTwice: true,
    });
    const sent = steps.get('sent') as { sent: Record<string, number>; rolledBack: unknown };
    expect(Object.keys(sent.sent).sort()).toEqual(['p:a', 'p:a-again', 'p:b', 'p:later', 'p:t']);
    expect(new Set(Object.values(sent.sent)).size).toBe(5);
    expect(sent.rolledBack).toBeNull();
    expect(steps.get('later')).toEqual({
      step: 'later',
      moved: { rescheduled: true },
      cancelled: { cancelled: true },
      state: 'cancelled',
    });
    expect((steps.get('index') as { names: string[] }).names).toHaveLength(1);
    expect(steps.get('done')).toBeDefined();

    const bodies = world.sandbox
      .messages()
      .map((m) => m.bodyText)
      .sort();
    expect(bodies).toEqual(['Body A', 'Body A', 'Body B', 'Later', 'Order 11 is on its way, Ada']);
    const keys = posts(world.sandbox).map((p) => p.key);
    expect(keys).toHaveLength(5);
    expect(new Set(keys).size).toBe(5);
    // pg-boss 11's own tables, not 10's: its version row says so.
    const { rows } = await world.pool.query(`SELECT version FROM "${schema}".version`);
    expect(Number(rows[0].version)).toBeGreaterThanOrEqual(25); // pg-boss 10 is 24
  }, 120_000);
});
