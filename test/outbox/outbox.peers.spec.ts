import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = process.cwd();
const OUTBOX_PEERS = ['pg-boss', 'pg'];

/** A copy of lib/ beside a node_modules holding every installed package but pg-boss and pg. */
async function libWithoutOutboxPeers(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'email-no-pgboss-'));
  await cp(join(ROOT, 'lib'), join(dir, 'lib'), { recursive: true });
  await mkdir(join(dir, 'node_modules'));
  for (const entry of await readdir(join(ROOT, 'node_modules'))) {
    if (entry.startsWith('.') || OUTBOX_PEERS.includes(entry)) continue;
    await symlink(join(ROOT, 'node_modules', entry), join(dir, 'node_modules', entry));
  }
  return dir;
}

describe('pg-boss and pg are loaded only by the outbox entry point', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await libWithoutOutboxPeers();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('"." loads without them; the outbox loads, and its boot says what to install', async () => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const register = pathToFileURL(join(ROOT, 'test/nest/support/ts-esm.register.mjs')).href;
    const script = join(ROOT, 'test/outbox/support/outbox-peers-absent.child.mjs');
    const out = await new Promise<string>((done, fail) =>
      execFile(
        process.execPath,
        ['--import', register, script, pathToFileURL(join(dir, 'lib')).href],
        { cwd: dir, env, timeout: 30_000 },
        (err, stdout, stderr) => (err ? fail(new Error(stderr || err.message)) : done(stdout)),
      ),
    );
    expect(JSON.parse(out.trim().split('\n').at(-1) as string)).toEqual({
      loaded: true,
      outboxLoaded: true,
      outbox: expect.stringContaining('EmailOutboxModule needs the optional peer dependency pg-boss'),
    });
  }, 40_000);
});
