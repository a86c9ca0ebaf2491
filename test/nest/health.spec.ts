import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { EmailHealthIndicator, EmailModule, InjectEmailHealthIndicator } from '../../lib/index.js';
import { importPeer, requirePeer } from '../../lib/peers/optional-peer.loader.js';
import { Test } from '@nestjs/testing';
import { EmailTestingModule } from '../../lib/kit/index.js';
import { json, startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { CapturingLogger } from '../support/capturing.logger.js';
import { startHttpApp, type HttpApp } from './http-app.helper.js';
import { useSandbox } from '../support/sandbox.js';

// The indicator's deadline: long enough for a first request on a busy machine, far below the module's 30 s.
const TIMEOUT_MS = 1_500;
const WRONG_KEY = 'sk_test_wrong_key_0123456789abcdef';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly email: EmailHealthIndicator,
    @InjectEmailHealthIndicator('wrong-key') private readonly wrongKey: EmailHealthIndicator,
    @InjectEmailHealthIndicator('restricted') private readonly restricted: EmailHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.email.isHealthy('email', { timeoutMs: TIMEOUT_MS })]);
  }

  @Get('wrong-key')
  @HealthCheck()
  checkWrongKey() {
    return this.health.check([() => this.wrongKey.isHealthy('email', { timeoutMs: TIMEOUT_MS })]);
  }

  @Get('restricted')
  @HealthCheck()
  checkRestricted() {
    return this.health.check([() => this.restricted.isHealthy('mail', { timeoutMs: TIMEOUT_MS })]);
  }
}

describe('EmailHealthIndicator behind a Terminus HealthCheckService endpoint', () => {
  const sandbox = useSandbox();
  let forbidding: ScriptedServer;
  let http: HttpApp;
  const logs = new CapturingLogger();

  beforeAll(async () => {
    forbidding = await startScriptedServer((_req, res) => json(res, 403, { error: 'plan free cannot list' }));
    const common = { logger: false as const };
    @Module({
      imports: [
        TerminusModule,
        EmailModule.forRoot({ apiKey: sandbox.apiKey, baseUrl: sandbox.baseUrl, ...common }),
        EmailModule.forRoot({ name: 'wrong-key', apiKey: WRONG_KEY, baseUrl: sandbox.baseUrl, ...common }),
        EmailModule.forRoot({
          name: 'restricted',
          apiKey: sandbox.apiKey,
          baseUrl: forbidding.url,
          ...common,
        }),
      ],
      controllers: [HealthController],
    })
    class HealthModule {}
    http = await startHttpApp(HealthModule, 'express', logs);
  });
  afterAll(async () => {
    await http.close();
    await forbidding.close();
  });

  afterEach(() => {
    for (const text of [...http.seen, ...logs.lines]) {
      expect(text).not.toContain(sandbox.apiKey);
      expect(text).not.toContain(WRONG_KEY);
    }
  });

  it('200 with the sandbox up, reporting the latency', async () => {
    const answer = await http.request('/health');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'ok', info: { email: { status: 'up' } } });
    expect(typeof answer.body.info.email.latencyMs).toBe('number');
    const reads = sandbox.requests().filter((r) => r.method === 'GET');
    expect(reads.at(-1)?.path).toMatch(/^\/emails\?limit=1$/);
  });

  it('503 unauthorized when the service refuses the key', async () => {
    const answer = await http.request('/health/wrong-key');
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({
      status: 'error',
      error: { email: { status: 'down', reason: 'unauthorized', statusCode: 401 } },
    });
  });

  it('503 forbidden when the key may not read', async () => {
    const answer = await http.request('/health/restricted');
    expect(answer.status).toBe(503);
    expect(answer.body.error.mail).toMatchObject({ status: 'down', reason: 'forbidden', statusCode: 403 });
    expect(answer.text).not.toContain('plan free'); // the service's own text stays out
    expect(forbidding.requests).toHaveLength(1); // one request, no retry
  });

  it('503 unavailable when the service answers 503, without retrying', async () => {
    const before = sandbox.requests().length;
    sandbox.faults.add({ route: 'GET /emails', mode: 'status', status: 503, times: 5 });
    const answer = await http.request('/health');
    expect(answer.status).toBe(503);
    expect(answer.body.error.email).toMatchObject({ status: 'down', reason: 'unavailable', statusCode: 503 });
    expect(sandbox.requests().length - before).toBe(1);
    sandbox.faults.clear();
  });

  it('503 timeout when the service hangs past the indicator deadline, and fast', async () => {
    sandbox.faults.add({ route: 'GET /emails', mode: 'hang' });
    const started = Date.now();
    const answer = await http.request('/health');
    const elapsed = Date.now() - started;
    expect(answer.status).toBe(503);
    expect(answer.body.error.email).toMatchObject({ status: 'down', reason: 'timeout' });
    // without the indicator's deadline it would wait for the module's 30 s one and outlast the test
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    sandbox.faults.clear();
    expect((await http.request('/health')).status).toBe(200); // and up again
  });

  it('503 unreachable when the sandbox is down', async () => {
    await sandbox.close();
    const answer = await http.request('/health');
    expect(answer.status).toBe(503);
    expect(answer.body.error.email).toMatchObject({ status: 'down', reason: 'unreachable' });
    expect(answer.body.error.email.message).not.toMatch(/127\.0\.0\.1|Bearer/);
  });
});

describe('EmailHealthIndicator without TerminusModule imported', () => {
  it('still reports, with a HealthIndicatorService of its own', async () => {
    // The test kit's module: EmailModule on a fresh mailbox of a sandbox it starts and closes.
    const moduleRef = await Test.createTestingModule({ imports: [EmailTestingModule.forRoot()] }).compile();
    await moduleRef.init();
    try {
      const indicator = moduleRef.get(EmailHealthIndicator);
      const up = await indicator.isHealthy();
      expect(up.email.status).toBe('up');
      const bad = await indicator.isHealthy('mail', { timeoutMs: -1 });
      expect(bad.mail).toMatchObject({ status: 'down', reason: 'error' });
    } finally {
      await moduleRef.close();
    }
  });
});

describe('when @nestjs/terminus is not installed', () => {
  it('loading it gives an error that says what to install', async () => {
    await expect(importPeer('@nestjs/terminus-not-installed', 'EmailHealthIndicator')).rejects.toThrow(
      'EmailHealthIndicator needs the optional peer dependency @nestjs/terminus-not-installed, which is not ' +
        'installed. Install it next to nestjs-transactional-email: npm install @nestjs/terminus-not-installed',
    );
    expect(() => requirePeer('@nestjs/terminus-not-installed', 'EmailHealthIndicator')).toThrow(
      /npm install @nestjs\/terminus-not-installed/,
    );
  });

  it('other load failures are not reported as "not installed"', async () => {
    const err = await importPeer('../../test/nest/does-not-exist.js', 'x').catch((e: unknown) => e);
    expect(String(err)).toMatch(/does-not-exist/);
  });
});
