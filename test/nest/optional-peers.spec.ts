import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = process.cwd();
const LIB = join(ROOT, 'lib');
const OPTIONAL = ['@nestjs/config', '@nestjs/terminus', '@opentelemetry/api'];

/** Every file reachable from `entry` through relative imports and re-exports. */
async function reachable(entry: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (files.has(file)) continue;
    const text = await readFile(file, 'utf8');
    files.set(file, text);
    for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.[^']+)\.js'/g)) {
      queue.push(resolve(dirname(file), `${match[1]}.ts`));
    }
  }
  return files;
}

/** Runs a script in plain Node with the TypeScript hooks; returns its JSON line. */
function runChild(script: string, libEntry: string, cwd: string): Promise<Record<string, unknown>> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const register = join(ROOT, 'test/nest/support/ts-esm.register.mjs');
  const args = ['--import', pathToFileURL(register).href, join(ROOT, 'test/nest/support', script)];
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [...args, pathToFileURL(libEntry).href],
      { cwd, env, timeout: 20_000 },
      (err, out, errOut) => {
        if (err) return fail(new Error(`${script} failed: ${errOut || err.message}`));
        done(JSON.parse(out.trim().split('\n').at(-1) as string) as Record<string, unknown>);
      },
    );
  });
}

/** A copy of lib/ beside a node_modules that has every package of ours but the optional peers. */
async function libWithoutOptionalPeers(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'email-no-peers-'));
  await cp(LIB, join(dir, 'lib'), { recursive: true });
  const source = join(ROOT, 'node_modules');
  for (const entry of await readdir(source)) {
    if (entry.startsWith('.')) continue;
    if (!entry.startsWith('@')) {
      await symlink(join(source, entry), join(dir, 'node_modules', entry)).catch(async () => {
        await mkdir(join(dir, 'node_modules'), { recursive: true });
        await symlink(join(source, entry), join(dir, 'node_modules', entry));
      });
      continue;
    }
    await mkdir(join(dir, 'node_modules', entry), { recursive: true });
    for (const name of await readdir(join(source, entry))) {
      if (OPTIONAL.includes(`${entry}/${name}`)) continue;
      await symlink(join(source, entry, name), join(dir, 'node_modules', entry, name));
    }
  }
  return dir;
}

describe('optional peers (@nestjs/config, @nestjs/terminus, @opentelemetry/api)', () => {
  // Both plain-Node runs start at once (each transpiles the sources it loads) and are checked below.
  let absent: Promise<Record<string, unknown>>;
  let present: Promise<Record<string, unknown>>;
  let dir: string;
  beforeAll(async () => {
    dir = await libWithoutOptionalPeers();
    absent = runChild('peers-absent.child.mjs', join(dir, 'lib/index.ts'), dir);
    present = runChild('config-present.child.mjs', join(LIB, 'config/email-config.options.ts'), ROOT);
    absent.catch(() => undefined);
    present.catch(() => undefined);
  });
  afterAll(async () => {
    await Promise.allSettled([absent, present]);
    await rm(dir, { recursive: true, force: true });
  });

  it('nothing reachable from lib/index.ts imports them statically (type-only imports aside)', async () => {
    const files = await reachable(join(LIB, 'index.ts'));
    expect(files.size).toBeGreaterThan(20);
    expect([...files.keys()]).toEqual(expect.arrayContaining([join(LIB, 'config/email-config.options.ts')]));
    const offenders: string[] = [];
    for (const [file, text] of files) {
      for (const match of text.matchAll(/(?:^|\n)\s*(import|export)\s+(?!type\s)[^;]*?from\s+'([^']+)'/g)) {
        if (OPTIONAL.some((peer) => match[2] === peer || match[2].startsWith(`${peer}/`)))
          offenders.push(file);
      }
      if (/(?:^|\n)\s*import\s+'@(nestjs\/(config|terminus)|opentelemetry\/api)/.test(text))
        offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });

  it('in plain Node: the package loads and works without them, and using them says what to install', async () => {
    expect(await absent).toEqual({
      loaded: true,
      configCall: expect.stringContaining('npm install @nestjs/config'),
      configKey: expect.stringContaining('npm install @nestjs/config'),
      configProvider: expect.stringContaining('npm install @nestjs/config'),
      service: 'EmailService',
      health: expect.stringContaining('npm install @nestjs/terminus'),
      listWithoutOtel: [],
      capture: 'undefined',
      runIn: 'ran',
    });
  });

  it('in plain Node with @nestjs/config installed: emailConfig is made by its own registerAs', async () => {
    expect(await present).toEqual({ realRegisterAs: true, key: 'CONFIGURATION(email)', timeoutMs: 4321 });
  });
});
