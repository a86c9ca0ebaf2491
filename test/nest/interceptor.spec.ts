import {
  Body,
  Controller,
  ForbiddenException,
  Get,
  GoneException,
  Module,
  Param,
  Post,
  Query,
  UseInterceptors,
} from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import {
  EMAIL_ERROR_INTERCEPTOR_OPTIONS,
  EmailBatchUncertainError,
  EmailErrorInterceptor,
  EmailModule,
  EmailNotFoundError,
  EmailOptionsError,
  EmailService,
  type EmailErrorInterceptorOptions,
  type EmailInput,
} from '../../lib/index.js';
import { EMAIL_HTTP_MESSAGES as M } from '../../lib/interceptors/email-error.constants.js';
import { emailErrorToHttpException } from '../../lib/interceptors/email-error.helpers.js';
import { TEST_API_KEY } from '../support/email-app.js';
import { emailLogJson } from '../support/records.fixture.js';
import { json, startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { CapturingLogger } from '../support/capturing.logger.js';
import { ADAPTERS, postJson, startHttpApp, type Answer, type HttpApp } from './http-app.helper.js';

/** Text the service puts in its error bodies: account details that must never reach an answer. */
const UPSTREAM = 'account 4711 (plan free, shard db-7) key';
const IDEMPOTENCY_KEY = 'order-1234:confirmation-email';

let server: ScriptedServer;
/** What the scripted service answers to the next request. */
type Script =
  | { status: number; headers?: Record<string, string> }
  | 'hang'
  | 'reset'
  | 'not-json'
  /** Sends fail with 500 and the look-up in the message log finds nothing. */
  | 'send-lost';
let script: Script = { status: 200 };

beforeAll(async () => {
  server = await startScriptedServer((req, res) => {
    if (script === 'hang') return;
    if (script === 'reset') return void req.socket.destroy();
    if (script === 'not-json') return void res.end('<html>oops</html>');
    if (script === 'send-lost')
      return req.method === 'GET' ? json(res, 200, []) : json(res, 500, { error: UPSTREAM });
    const { status, headers } = script;
    if (status === 200) return json(res, 200, req.method === 'POST' ? emailLogJson() : []);
    json(res, status, { error: `${UPSTREAM} ${String(req.headers.authorization)}` }, headers);
  });
});
afterAll(() => server.close());

const input: EmailInput = { from: 'app@example.com', to: ['ada@example.com'], subject: 'Hi', text: 'Hello' };

@Controller('mail')
@UseInterceptors(EmailErrorInterceptor)
class MailController {
  constructor(private readonly email: EmailService) {}

  @Get('list')
  list(@Query('timeoutMs') timeoutMs?: string) {
    return this.email.list({ limit: 1, timeoutMs: timeoutMs ? Number(timeoutMs) : undefined });
  }

  @Post('send')
  send(@Body() body: EmailInput) {
    return this.email.send(body, { idempotencyKey: IDEMPOTENCY_KEY });
  }

  @Get('events/:id')
  events(@Param('id') id: string) {
    return this.email.listEvents(Number(id));
  }

  @Get('aborted')
  aborted() {
    return this.email.list({ signal: AbortSignal.abort() });
  }

  @Get('throw/:kind')
  throwIt(@Param('kind') kind: string) {
    const errors: Record<string, () => Error> = {
      batch: () =>
        new EmailBatchUncertainError({
          items: [input],
          since: new Date(),
          attempts: 1,
          cause: new Error(UPSTREAM),
        }),
      options: () => new EmailOptionsError(['apiKey is required and must be a non-empty string']),
      http: () => new ForbiddenException('not yours'),
      plain: () => new Error(`plain failure ${UPSTREAM}`),
    };
    throw errors[kind]();
  }
}

/** Per-route interceptor made with `new` and an override. */
@Controller('custom')
class CustomController {
  constructor(private readonly email: EmailService) {}

  @Get('events/:id')
  @UseInterceptors(
    new EmailErrorInterceptor({
      map: (err) => (err instanceof EmailNotFoundError ? new GoneException('That email is gone') : undefined),
      logger: false,
    }),
  )
  events(@Param('id') id: string) {
    return this.email.listEvents(Number(id));
  }
}

function emailModule() {
  return EmailModule.forRoot({
    apiKey: TEST_API_KEY,
    baseUrl: server.url,
    maxRetries: 0,
    timeoutMs: 3000,
    logger: false,
  });
}

describe.each(ADAPTERS)('EmailErrorInterceptor on %s', (adapter) => {
  let http: HttpApp;
  const logs = new CapturingLogger();

  beforeAll(async () => {
    @Module({ imports: [emailModule()], controllers: [MailController, CustomController] })
    class AppModule {}
    http = await startHttpApp(AppModule, adapter, logs);
  });
  afterAll(() => http.close());

  async function answerTo(next: Script, path = '/mail/list', init?: RequestInit): Promise<Answer> {
    script = next;
    return http.request(path, init);
  }

  function expectShape(answer: Answer, status: number, message: string, error: string): void {
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ statusCode: status, message, error });
    expect(answer.headers.get('content-type')).toMatch(/application\/json/);
    expect(answer.text).not.toContain(UPSTREAM);
    expect(answer.text).not.toContain(TEST_API_KEY);
  }

  it('client-side validation -> 400 with the issues, before any request', async () => {
    const before = server.requests.length;
    const answer = await answerTo({ status: 200 }, '/mail/send', postJson({ ...input, to: [] }));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ statusCode: 400, error: 'Bad Request', outcome: 'not-sent' });
    expect(answer.body.message).toMatch(/Invalid email input/);
    expect(answer.body.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'to' })]));
    expect(server.requests.length).toBe(before);
  });

  it('API 400 -> 400 without the service text', async () => {
    expectShape(await answerTo({ status: 400 }), 400, M.badRequest, 'Bad Request');
  });

  it('401 -> 502 naming no secret', async () => {
    const answer = await answerTo({ status: 401 });
    expectShape(answer, 502, M.credentials, 'Bad Gateway');
    expect(answer.text).not.toMatch(/Bearer|sk_test/);
  });

  it('403 -> 502 naming no secret', async () => {
    expectShape(await answerTo({ status: 403 }), 502, M.forbidden, 'Bad Gateway');
  });

  it('404 -> 404', async () => {
    expectShape(await answerTo({ status: 404 }, '/mail/events/7'), 404, M.notFound, 'Not Found');
  });

  it('409 -> 409', async () => {
    expectShape(await answerTo({ status: 409 }), 409, M.conflict, 'Conflict');
  });

  it('429 -> 429 with Retry-After in whole seconds, rounded up', async () => {
    const answer = await answerTo({ status: 429, headers: { 'retry-after': '2.5' } });
    expectShape(answer, 429, M.rateLimited, 'Too Many Requests');
    expect(answer.headers.get('retry-after')).toBe('3');
    expect(answer.body.retryAfterSeconds).toBe(3);
  });

  it('429 without Retry-After from the service -> 429 without Retry-After', async () => {
    const answer = await answerTo({ status: 429 });
    expectShape(answer, 429, M.rateLimited, 'Too Many Requests');
    expect(answer.headers.get('retry-after')).toBeNull();
    expect(answer.body).not.toHaveProperty('retryAfterSeconds');
  });

  it.each([500, 502])('%i -> 502', async (status) => {
    expectShape(await answerTo({ status }), 502, M.serverFailure, 'Bad Gateway');
  });

  it('503 -> 503', async () => {
    expectShape(await answerTo({ status: 503 }), 503, M.unavailable, 'Service Unavailable');
  });

  it('connection error -> 503', async () => {
    expectShape(await answerTo('reset'), 503, M.unreachable, 'Service Unavailable');
  });

  it('timeout -> 504', async () => {
    // the server never answers: a 504 at all means the 300 ms deadline ended the call
    expectShape(await answerTo('hang', '/mail/list?timeoutMs=300'), 504, M.timeout, 'Gateway Timeout');
  });

  it('uncertain send -> 502 saying the outcome is uncertain and naming the idempotency key', async () => {
    const answer = await answerTo('send-lost', '/mail/send', postJson(input));
    expectShape(answer, 502, M.sendUncertain, 'Bad Gateway');
    expect(answer.body).toMatchObject({ outcome: 'uncertain', idempotencyKey: IDEMPOTENCY_KEY });
    expect(answer.body.message).toMatch(/uncertain/);
    expect(server.requests.at(-1)?.method).toBe('GET'); // it was looked up before giving up
  });

  it('uncertain batch -> 502 saying the outcome is uncertain', async () => {
    const answer = await answerTo({ status: 200 }, '/mail/throw/batch');
    expectShape(answer, 502, M.batchUncertain, 'Bad Gateway');
    expect(answer.body.outcome).toBe('uncertain');
    expect(answer.text).not.toContain('ada@example.com'); // the items stay out of the answer
  });

  it('a call aborted by its signal -> 503', async () => {
    expectShape(await answerTo({ status: 200 }, '/mail/aborted'), 503, M.aborted, 'Service Unavailable');
  });

  it('an answer that breaks the contract -> 502 without the body', async () => {
    const answer = await answerTo('not-json');
    expectShape(answer, 502, M.unexpected, 'Bad Gateway');
    expect(answer.text).not.toContain('oops');
  });

  it('an undocumented status -> 502', async () => {
    expectShape(await answerTo({ status: 418 }), 502, M.unexpected, 'Bad Gateway');
  });

  it('errors that are not ours pass through untouched', async () => {
    const http403 = await answerTo({ status: 200 }, '/mail/throw/http');
    expect(http403.status).toBe(403);
    expect(http403.body).toEqual({ statusCode: 403, message: 'not yours', error: 'Forbidden' });
    const plain = await answerTo({ status: 200 }, '/mail/throw/plain');
    expect(plain.status).toBe(500);
    expect(plain.body).toEqual({ statusCode: 500, message: 'Internal server error' });
  });

  it('a setup mistake (EmailOptionsError) passes through to Nest: 500', async () => {
    const answer = await answerTo({ status: 200 }, '/mail/throw/options');
    expect(answer.status).toBe(500);
    expect(answer.body).toEqual({ statusCode: 500, message: 'Internal server error' });
  });

  it('a route can use its own instance with an overriding map; other rows keep the default', async () => {
    const gone = await answerTo({ status: 404 }, '/custom/events/7');
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ statusCode: 410, message: 'That email is gone' });
    const other = await answerTo({ status: 503 }, '/custom/events/7');
    expectShape(other, 503, M.unavailable, 'Service Unavailable');
  });

  it('no answer and no log line carried the API key; 5xx answers were logged with details', () => {
    expect(http.seen.length).toBeGreaterThan(15);
    for (const text of [...http.seen, ...logs.lines]) {
      expect(text).not.toContain(TEST_API_KEY);
      expect(text).not.toContain(TEST_API_KEY.slice(8));
    }
    expect(logs.lines.join('\n')).toMatch(
      /EmailServerError answered 502: GET \/emails\?limit=1 failed with status 500/,
    );
    // 401 and 403 (answered 502 above) are the module's to log, once, with the reason: not again here.
    expect(logs.lines.join('\n')).not.toMatch(/(EmailAuthenticationError|EmailForbiddenError) answered/);
  });
});

describe.each(ADAPTERS)('EmailErrorInterceptor as APP_INTERCEPTOR on %s', (adapter) => {
  let http: HttpApp;

  @Controller('plain')
  class PlainController {
    constructor(private readonly email: EmailService) {}

    @Get('events/:id')
    events(@Param('id') id: string) {
      return this.email.listEvents(Number(id));
    }
  }

  const options: EmailErrorInterceptorOptions = {
    map: (err) =>
      err instanceof EmailNotFoundError ? new GoneException('Gone for good') : emailErrorToHttpException(err),
    logger: false,
  };

  beforeAll(async () => {
    @Module({
      imports: [emailModule()],
      controllers: [PlainController],
      providers: [
        { provide: APP_INTERCEPTOR, useClass: EmailErrorInterceptor },
        { provide: EMAIL_ERROR_INTERCEPTOR_OPTIONS, useValue: options },
      ],
    })
    class GlobalModule {}
    http = await startHttpApp(GlobalModule, adapter);
  });
  afterAll(() => http.close());

  it('maps errors of routes without @UseInterceptors, with the provided options', async () => {
    script = { status: 404 };
    const gone = await http.request('/plain/events/3');
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ message: 'Gone for good' });
    script = { status: 429, headers: { 'retry-after': '7' } };
    const limited = await http.request('/plain/events/3');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
  });
});

describe('EmailErrorInterceptor without DI', () => {
  it('maps nothing that is not ours, and lets a map return the error to pass it through', () => {
    const interceptor = new EmailErrorInterceptor({ map: (err) => err, logger: false });
    const err = new EmailNotFoundError({ status: 404, method: 'GET', path: '/emails/1/events' });
    const context = { getType: () => 'http' } as never;
    expect(interceptor.translate(err, context)).toBe(err);
    const other = new Error('x');
    expect(new EmailErrorInterceptor().translate(other, context)).toBe(other);
    expect(emailErrorToHttpException(other)).toBeUndefined();
  });
});
