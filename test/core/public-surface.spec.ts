import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as root from '../../lib/index.js';
import type {
  EmailRateBudget,
  EmailRateLimitOptions,
  SendManyOptions,
  SendManyProgress,
  SendManyResult,
} from '../../lib/index.js';
import * as testing from '../../lib/kit/index.js';
import type { SandboxLimitCounts } from '../../lib/kit/index.js';
import * as queue from '../../lib/queue/index.js';
import * as outbox from '../../lib/outbox/index.js';

const LIB = join(process.cwd(), 'lib');

// The package's exported runtime names, exactly. A change here is a change of the public API:
// add a name deliberately (with JSDoc and a CHANGELOG line), never by re-exporting a whole folder.
describe('public surface', () => {
  it("'nestjs-transactional-email' exports exactly these names", () => {
    expect(Object.keys(root).sort()).toEqual([
      'AttachmentDto',
      'BatchEmailItemDto',
      'EMAIL_ERROR_INTERCEPTOR_OPTIONS',
      'EmailAbortError',
      'EmailAccountError',
      'EmailApiError',
      'EmailAuthenticationError',
      'EmailBadRequestError',
      'EmailBatchUncertainError',
      'EmailConflictError',
      'EmailConnectionError',
      'EmailDetailDto',
      'EmailError',
      'EmailErrorInterceptor',
      'EmailErrorResponseDto',
      'EmailEventDto',
      'EmailForbiddenError',
      'EmailHealthIndicator',
      'EmailLogDto',
      'EmailModule',
      'EmailNotFoundError',
      'EmailOptionsError',
      'EmailProviderError',
      'EmailRateLimitError',
      'EmailSendUncertainError',
      'EmailServerError',
      'EmailService',
      'EmailSuppressedError',
      'EmailSuppressions',
      'EmailTimeoutError',
      'EmailUnavailableError',
      'EmailUnexpectedResponseError',
      'EmailValidationError',
      'EmailValidationErrorResponseDto',
      'InjectEmailHealthIndicator',
      'InjectEmailService',
      'IsEmailAddress',
      'SendEmailDto',
      'attachmentFromBuffer',
      'attachmentFromFile',
      'createEmailConfig',
      'defineEmailTemplates',
      'emailConfig',
      'emailValidationExceptionFactory',
      'getEmailServiceToken',
      'parseEmailEnv',
      'scheduleAt',
      'scheduleIn',
    ]);
  });

  it("'nestjs-transactional-email/testing' exports exactly these names", () => {
    expect(Object.keys(testing).sort()).toEqual([
      'EmailSandbox',
      'EmailTestingModule',
      'RemoteSandboxMailbox',
      'SAMPLE_TEMPLATE',
      'SandboxAccounts',
      'SandboxClock',
      'SandboxFaults',
      'SandboxMailbox',
      'clickLink',
      'codeIn',
      'codesIn',
      'emailMatchers',
      'generateSandboxKey',
      'lastMessageTo',
      'linkIn',
      'linksIn',
      'linksOf',
      'seededRandom',
      'waitForCode',
      'waitForLink',
      'waitForMessage',
    ]);
  });

  it('every name exported by lib/index.ts, lib/testing/index.ts, lib/kit/index.ts and lib/queue/index.ts is marked @publicApi where it is declared', () => {
    const unmarked: string[] = [];
    for (const [dir, index] of [LIB, join(LIB, 'testing'), join(LIB, 'kit'), join(LIB, 'queue')].map((d) => [
      d,
      readFileSync(join(d, 'index.ts'), 'utf8'),
    ]))
      for (const [, names, from] of index.matchAll(/export (?:type )?\{([^}]*)\} from '\.\/([^']+)\.js'/g)) {
        const source = readFileSync(join(dir, `${from}.ts`), 'utf8');
        for (const name of names
          .split(',')
          .map((n) => n.replace('type ', '').trim())
          .filter(Boolean)) {
          const at = source.search(
            new RegExp(
              `^export (?:abstract )?(?:async )?(?:class|function|const|interface|type) ${name}\\b`,
              'm',
            ),
          );
          const before = source.slice(0, at);
          const doc = before.slice(before.lastIndexOf('/**'));
          if (
            at < 0 ||
            !/@publicApi/.test(doc) ||
            /\*\/[\s\S]*\n(?!@)\S/.test(doc.replace(/\n\/\/[^\n]*/g, '').replace(/\n$/, ''))
          )
            unmarked.push(`${from}: ${name}`);
        }
      }
    expect(unmarked).toEqual([]);
  });

  it("'nestjs-transactional-email/queue' exports exactly these names", () => {
    expect(Object.keys(queue).sort()).toEqual([
      'EmailJobCancelledError',
      'EmailJobConflictError',
      'EmailQueue',
      'EmailQueueHealthIndicator',
      'EmailQueueModule',
      'EmailQueueUnavailableError',
      'EmailQueueWorker',
      'idempotencyKeyFrom',
      'rebuildJobError',
    ]);
  });

  // Issue 24: the ./outbox entry point (kept to this block).
  it("'nestjs-transactional-email/outbox' exports exactly these names, each marked @publicApi", () => {
    expect(Object.keys(outbox).sort()).toEqual([
      'EmailJobCancelledError',
      'EmailJobConflictError',
      'EmailOutbox',
      'EmailOutboxHealthIndicator',
      'EmailOutboxModule',
      'EmailOutboxTxError',
      'EmailOutboxUnavailableError',
      'EmailOutboxWorker',
      'OUTBOX_TX_KINDS',
      'idempotencyKeyFrom',
      'outboxSetupSql',
      'rebuildJobError',
    ]);
    const dir = join(LIB, 'outbox');
    const unmarked: string[] = [];
    for (const [, names, from] of readFileSync(join(dir, 'index.ts'), 'utf8').matchAll(
      /export (?:type )?\{([^}]*)\} from '(\.{1,2}\/[^']+)\.js'/g,
    )) {
      const source = readFileSync(join(dir, `${from}.ts`), 'utf8');
      for (const name of names
        .split(',')
        .map((n) => n.replace('type ', '').trim())
        .filter(Boolean)) {
        const at = source.search(
          new RegExp(`^export (?:abstract )?(?:class|function|const|interface|type) ${name}\\b`, 'm'),
        );
        const before = source.slice(0, at);
        if (at < 0 || !/@publicApi/.test(before.slice(before.lastIndexOf('/**'))))
          unmarked.push(`${from}: ${name}`);
      }
    }
    expect(unmarked).toEqual([]);
  });

  it('exports the types of rateLimit and sendMany (and the sandbox limit counts)', () => {
    const budget: EmailRateBudget = { limit: 10, intervalMs: 1000 };
    const rateLimit: EmailRateLimitOptions = { recipients: budget, requests: budget, redis: 'redis://x' };
    const progress: SendManyProgress = { batch: 0, batches: 1, results: [], done: 0, total: 0 };
    const result: SendManyResult = { index: 0, status: 'not-sent', error: new Error('x') };
    const options: SendManyOptions = { onBatch: () => undefined };
    const counts: SandboxLimitCounts = { quota: 0, rate: 0 };
    expect([rateLimit, progress, result, options, counts]).toHaveLength(5);
  });

  // The count is written once, in CONTRIBUTING.md's "Public surface" (45 in issue 28; 46 with issue 35's
  // EmailAccountError; 48 with issue 49's EmailSuppressions and EmailSuppressedError): a new name raises it
  // there, on purpose.
  it("'nestjs-transactional-email' has exactly as many runtime values as CONTRIBUTING.md says", () => {
    const contributing = readFileSync(join(process.cwd(), 'CONTRIBUTING.md'), 'utf8');
    const written = [...contributing.matchAll(/\*\*(\d+) runtime values\*\*/g)].map((m) => Number(m[1]));
    expect(written).toHaveLength(1);
    expect(Object.keys(root)).toHaveLength(written[0] as number);
  });

  it('every runtime name of every entry point has its line in CONTRIBUTING.md\'s "Public surface"', () => {
    const contributing = readFileSync(join(process.cwd(), 'CONTRIBUTING.md'), 'utf8');
    const start = contributing.indexOf('## Public surface');
    const section = contributing.slice(start, contributing.indexOf('\n## ', start + 1));
    const listed = new Set([...section.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1]));
    const names = [
      ...Object.keys(root),
      ...Object.keys(testing),
      ...Object.keys(queue),
      ...Object.keys(outbox),
    ];
    expect(names.filter((name) => !listed.has(name))).toEqual([]);
    expect([...listed].filter((name) => !names.includes(name) && /^[A-Za-z_]+$/.test(name))).toEqual([]);
  });

  it('no exported token resolves to the module options that hold the raw API key', () => {
    expect(Object.keys(root)).not.toContain('EMAIL_MODULE_OPTIONS');
  });
});
