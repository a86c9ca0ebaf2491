import 'reflect-metadata';
import { APP_PIPE } from '@nestjs/core';
import { Body, Controller, Module, Post, UseInterceptors, ValidationPipe } from '@nestjs/common';
import {
  EmailErrorInterceptor,
  EmailModule,
  EmailService,
  SendEmailDto,
  emailValidationExceptionFactory,
  type EmailInput,
} from '../../lib/index.js';
import { TEST_API_KEY } from '../support/email-app.js';
import { startScriptedServer, type ScriptedServer } from '../support/scripted-server.js';
import { postJson, startHttpApp, type HttpApp } from './http-app.helper.js';

@Controller('mail')
@UseInterceptors(EmailErrorInterceptor)
class MailController {
  constructor(private readonly email: EmailService) {}

  /** Checked by ValidationPipe against the DTO. */
  @Post('dto')
  viaDto(@Body() dto: SendEmailDto) {
    return { accepted: dto.to.length };
  }

  /** Not checked by the pipe (a plain object): EmailService refuses it with EmailValidationError. */
  @Post('service')
  viaService(@Body() body: Record<string, unknown>) {
    return this.email.send(body as unknown as EmailInput);
  }
}

let server: ScriptedServer;

@Module({
  controllers: [MailController],
  providers: [
    {
      provide: APP_PIPE,
      useValue: new ValidationPipe({
        whitelist: true,
        forbidNonWhitelisted: true,
        transform: true,
        exceptionFactory: emailValidationExceptionFactory,
      }),
    },
  ],
})
class AppModule {}

const bad = {
  from: 'sender@example.com',
  to: ['ok@example.com', 'not an address'],
  subject: 'Hi',
  text: 'x',
  cc: ['boss@example.com'],
  attachments: [{ filename: 'a.txt', content: '!!not base64!!', contentType: 'text/plain' }],
};

describe('one 400 shape: ValidationPipe with emailValidationExceptionFactory answers like the interceptor', () => {
  let http: HttpApp;
  beforeAll(async () => {
    server = await startScriptedServer();
    const root = {
      module: AppModule,
      imports: [EmailModule.forRoot({ apiKey: TEST_API_KEY, baseUrl: server.url, logger: false })],
    };
    http = await startHttpApp(root as never, 'express');
  });
  afterAll(async () => {
    await http.close();
    await server.close();
  });

  it('the same bad body gives the same answer through the DTO and through EmailService', async () => {
    const viaDto = await http.request('/mail/dto', postJson(bad));
    const viaService = await http.request('/mail/service', postJson(bad));
    expect(server.requests).toHaveLength(0); // refused before any request to the service
    expect(viaDto.status).toBe(400);
    expect(viaService.status).toBe(400);
    expect(Object.keys(viaDto.body).sort()).toEqual(['error', 'issues', 'message', 'outcome', 'statusCode']);
    expect(Object.keys(viaService.body).sort()).toEqual(Object.keys(viaDto.body).sort());
    expect(viaDto.body).toMatchObject({ statusCode: 400, error: 'Bad Request', outcome: 'not-sent' });
    const paths = (b: Record<string, any>) => (b.issues as { path: string }[]).map((i) => i.path).sort();
    expect(paths(viaDto.body)).toEqual(['attachments[0].content', 'cc', 'to[1]']);
    expect(paths(viaDto.body)).toEqual(paths(viaService.body));
    const sorted = (b: Record<string, any>) =>
      [...(b.issues as { path: string; message: string }[])].sort((x, y) => x.path.localeCompare(y.path));
    expect(sorted(viaDto.body)).toEqual(sorted(viaService.body));
  });

  it('a field nobody knows is refused with its path; a good body passes', async () => {
    const unknown = await http.request(
      '/mail/dto',
      postJson({ ...bad, cc: undefined, to: ['a@example.com'], attachments: undefined, colour: 'red' }),
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues).toEqual([{ path: 'colour', message: expect.stringContaining('colour') }]);
    const good = await http.request(
      '/mail/dto',
      postJson({ ...bad, cc: undefined, to: ['a@example.com'], attachments: undefined }),
    );
    expect(good.status).toBe(201);
    expect(good.body).toEqual({ accepted: 1 });
  });
});
