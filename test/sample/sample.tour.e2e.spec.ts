/**
 * docs/sample.md checked against the sample: every file it names exists, `npm run sample` is what it says,
 * and every curl command of its tour runs, in order, against the sample started as `main.ts` starts it
 * (embedded sandbox and Redis), over real HTTP. A comment `# -> text` after a command: its output contains
 * `text`; `# => text`: its output is exactly `text`. A read (no `-X POST`/`-X DELETE`) with an expectation
 * is repeated until it holds (a background job catching up), up to a limit; a write runs once. A renamed
 * file, route or field in the sample fails here.
 */
import type { INestApplication } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { sampleBanner } from '../../sample/src/app.banner.js';
import { createSampleApp } from '../../sample/src/app.setup.js';
import { startLocalRedis, type LocalRedis } from '../../sample/src/redis/local-redis.js';
import { startLocalSandbox } from '../../sample/src/sandbox/local-sandbox.js';

const repo = process.cwd();
const tour = readFileSync(join(repo, 'docs', 'sample.md'), 'utf8');
const DOC_URL = 'http://127.0.0.1:3000';

/**
 * The tour's pauses, long enough for a reader to look around (a 429 with Retry-After: 20), made short here: the
 * same fault, the same states in the same order (the job given back, no attempt spent, sent once the fault is
 * gone), without the spec waiting out 20 s. The reads that follow wait until their state holds.
 */
const shorter = (text: string) => text.replaceAll('"retryAfter":20', '"retryAfter":2');

/** One command of the tour, with what its output must show. */
interface TourCommand {
  command: string;
  expect?: { mode: 'contains' | 'equals'; text: string };
}

/** The bash blocks of the tour ("Try it with curl" up to "Where to look"), each as its commands. */
function tourBlocks(): TourCommand[][] {
  const part = tour.slice(tour.indexOf('## Try it with curl'), tour.indexOf('## Where to look'));
  return [...part.matchAll(/```bash\n([\s\S]*?)```/g)].map(([, body]) => {
    const commands: TourCommand[] = [];
    for (const line of body.replace(/\\\n\s*/g, ' ').split('\n')) {
      const text = line.trim();
      if (text === '' || text.startsWith('#')) continue;
      const m = /^(.*?)\s+# ([-=])> (.*)$/.exec(text);
      const command = shorter((m ? m[1] : text).replace(/^sleep \d+; /, '')); // waits are the spec's to make
      commands.push(
        m
          ? { command, expect: { mode: m[2] === '-' ? 'contains' : 'equals', text: shorter(m[3].trim()) } }
          : { command },
      );
    }
    return commands;
  });
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** One bash script per block: commands in order, sharing variables (`JOB=...`), stopping at the first miss. */
function script(commands: TourCommand[], url: string): string {
  const lines = ['set -u'];
  for (const { command: raw, expect } of commands) {
    const command = raw.split(DOC_URL).join(url);
    if (!expect) {
      lines.push(`${command} >/dev/null || { echo ${quote(`FAILED: ${raw}`)} >&2; exit 1; }`);
      continue;
    }
    const tries = /-X (POST|DELETE|PUT|PATCH)/.test(command) ? 1 : 150;
    const test =
      expect.mode === 'contains'
        ? `[[ "$out" == *${quote(expect.text)}* ]]`
        : `[[ "$(printf '%s' "$out" | tr -d '[:space:]')" == ${quote(expect.text)} ]]`;
    lines.push(
      `ok=; for i in $(seq 1 ${tries}); do out=$(${command}); if ${test}; then ok=1; break; fi; sleep 0.2; done`,
      `[ -n "$ok" ] || { printf '%s\\n%s\\n' ${quote(`FAILED: ${raw}  (expected ${expect.mode} ${expect.text})`)} "got: $out" >&2; exit 1; }`,
    );
  }
  return lines.join('\n');
}

describe('docs/sample.md names what exists', () => {
  it('every file it names exists (sample/src/... unless another top folder is given)', () => {
    const named = [...tour.matchAll(/`([\w./-]+\.(?:ts|mjs|js|json))`/g)].map(([, path]) => path);
    expect(named.length).toBeGreaterThan(10);
    const missing = named.filter((path) => {
      const fromRepo = /^(sample|test|scripts|\.ci|lib|docs)\//.test(path);
      return !existsSync(fromRepo ? join(repo, path) : join(repo, 'sample', 'src', path));
    });
    expect(missing).toEqual([]);
  });

  it('says what `npm run sample` runs', () => {
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(tour).toContain(`\`npm run sample\` is \`${pkg.scripts.sample}\``);
  });

  it('shows the banner the sample prints, line for line (its ports and key as the page writes them)', () => {
    const shown = /\n```\n(Sample app listening[\s\S]*?)\n```/.exec(tour)?.[1].split('\n') ?? [];
    const at = (prefix: string) =>
      /(\S+:\/\/\S+?)[ )]/.exec(shown.find((l) => l.startsWith(prefix)) ?? '')?.[1];
    const sandboxUrl = at('Email: embedded sandbox at') ?? 'missing';
    const printed = sampleBanner({
      url: DOC_URL,
      sandbox: { baseUrl: sandboxUrl, apiKey: 'sk_test_…', uiUrl: `${sandboxUrl}/__sandbox/outbox/` },
      redisUrl: at('Queue: embedded redis-server at') ?? 'missing',
      postgresUrl: at('Outbox: embedded PostgreSQL at') ?? 'missing',
      telemetry: false,
    });
    expect(shown).toEqual(printed);
  });

  it('has a tour of commands, each but the set-up ones with an expectation', () => {
    const blocks = tourBlocks();
    expect(blocks).toHaveLength(4);
    const all = blocks.flat();
    expect(all.length).toBeGreaterThan(20);
    expect(all.filter((c) => !c.expect).map((c) => c.command.split(' ')[0])).toEqual(
      expect.arrayContaining(['JOB=$(curl']),
    );
  });
});

describe('the tour of docs/sample.md, run against the sample', () => {
  const saved = { ...process.env };
  let app: INestApplication;
  let redis: LocalRedis | null;
  let url: string;

  beforeAll(async () => {
    delete process.env.EMAIL_BASE_URL;
    delete process.env.EMAIL_API_KEY;
    delete process.env.REDIS_URL;
    // Short waits between a job's attempts, so that the exactly-once walk-through does not take minutes.
    Object.assign(process.env, {
      NOTIFICATION_RETRY_MS: '100',
      NOTIFICATION_MAX_ATTEMPTS: '50',
      EMAIL_MAX_RETRIES: '1',
    });
    redis = await startLocalRedis();
    const sandbox = await startLocalSandbox();
    if (!sandbox) throw new Error('the sample should start an embedded sandbox without EMAIL_BASE_URL');
    app = await createSampleApp({ sandbox, logger: false });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await redis?.stop();
    process.env = saved;
  });

  it.each(tourBlocks().map((block, i) => [i + 1, block] as const))(
    'block %i runs as written',
    async (_n, block) => {
      // Asynchronously: the sample answers from this very process.
      const run = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile('bash', ['-c', script(block, url)], { timeout: 90_000 }, (err, _stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
        );
      });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    },
    100_000,
  );
});
