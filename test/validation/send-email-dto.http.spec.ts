import 'reflect-metadata';
import {
  Body,
  Controller,
  type INestApplication,
  ParseArrayPipe,
  Post,
  ValidationPipe,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { BatchEmailItemDto, SendEmailDto } from '../../lib/index.js';
import { attachment, batch, inline } from './email-fixtures.js';

@Controller('mail')
class MailController {
  @Post()
  send(@Body() dto: SendEmailDto) {
    return { isDto: dto instanceof SendEmailDto, to: dto.to, scheduledAt: dto.scheduledAt ?? null };
  }

  @Post('batch')
  sendBatch(
    @Body(new ParseArrayPipe({ items: BatchEmailItemDto, whitelist: true, forbidNonWhitelisted: true }))
    items: BatchEmailItemDto[],
  ) {
    return { count: items.length, allDtos: items.every((i) => i instanceof BatchEmailItemDto) };
  }
}

describe('SendEmailDto behind ValidationPipe over real HTTP', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [MailController] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/mail`;
  });

  afterAll(async () => {
    await app.close();
  });

  async function post(body: unknown, path = ''): Promise<{ status: number; json: any }> {
    const res = await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  }

  it('accepts a valid body and hands the controller a SendEmailDto', async () => {
    const { status, json } = await post(
      inline({ scheduledAt: '2001-01-01T00:00:00Z', attachments: [attachment(3)] }),
    );
    expect(status).toBe(201);
    expect(json).toEqual({ isDto: true, to: ['ada@example.com'], scheduledAt: '2001-01-01T00:00:00Z' });
  });

  it('answers 400 naming an unsupported field', async () => {
    const { status, json } = await post(inline({ cc: ['boss@example.com'], replyTo: 'x@example.com' }));
    expect(status).toBe(400);
    expect(json.message).toEqual(
      expect.arrayContaining([
        'cc is not supported: the email service does not support CC recipients; remove the field',
        'replyTo is not supported: the email service does not support a Reply-To address; remove the field',
      ]),
    );
  });

  it('answers 400 with every issue of a bad body', async () => {
    const { status, json } = await post({
      from: 'sender@example.com',
      to: ['ok@example.com', 'not an address', 'x@example.com\r\nBcc: y@example.com'],
      html: '',
    });
    expect(status).toBe(400);
    expect(json.error).toBe('Bad Request');
    expect(json.message).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^to\[1\] is not a valid email address.*; to\[2\] must not contain a line break/,
        ),
        'subject is required unless templateId is set',
        expect.stringMatching(/^html or text is required/),
      ]),
    );
  });

  it('answers 400 for template-mode and attachment rules, with nested paths', async () => {
    const { status, json } = await post({
      ...inline({ templateId: 3, variables: { n: 1 } }),
      attachments: [attachment(1, { content: 'not base64', cid: 'logo' })],
    });
    expect(status).toBe(400);
    expect(json.message).toEqual(
      expect.arrayContaining([
        'subject must be omitted when templateId is set: the template provides it',
        'text must be omitted when templateId is set: the template provides it',
        'variables.n must be a string (template variables are strings)',
        expect.stringMatching(/^attachments\.0\.content is not valid base64/),
        expect.stringMatching(/^attachments\.0\.cid is not supported: .*inline \(CID\) attachments/),
      ]),
    );
  });

  it('answers 400 for an unknown field and for a schedule beyond 30 days', async () => {
    const far = new Date(Date.now() + 31 * 86_400_000).toISOString();
    const { status, json } = await post(inline({ priority: 'high', scheduledAt: far }));
    expect(status).toBe(400);
    expect(json.message).toEqual(
      expect.arrayContaining([
        'property priority should not exist',
        expect.stringMatching(/^scheduledAt is more than 30 days/),
      ]),
    );
  });

  // ParseArrayPipe stops at the first bad item and drops its index; EmailService.sendBatch lists them all.
  it('validates batch items with ParseArrayPipe and BatchEmailItemDto', async () => {
    expect(await post(batch(3), '/batch')).toEqual({ status: 201, json: { count: 3, allDtos: true } });
    const { status, json } = await post(batch(2, { scheduledAt: '2030-01-01T00:00:00Z' }), '/batch');
    expect(status).toBe(400);
    expect(json.message).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^scheduledAt is not allowed in a batch: batches do not support scheduling/),
      ]),
    );
  });
});
