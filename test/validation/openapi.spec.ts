import 'reflect-metadata';
import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiServiceUnavailableResponse,
  DocumentBuilder,
  SwaggerModule,
  type OpenAPIObject,
} from '@nestjs/swagger';
import {
  BatchEmailItemDto,
  EmailDetailDto,
  EmailErrorResponseDto,
  EmailEventDto,
  EmailLogDto,
  EmailValidationErrorResponseDto,
  SendEmailDto,
} from '../../lib/index.js';
import { MAX_ATTACHMENTS, MAX_FILENAME_LENGTH } from '../../lib/validation/validation.constants.js';
import {
  NOT_IN_BATCH_FIELDS,
  UNSUPPORTED_ATTACHMENT_FIELDS,
  UNSUPPORTED_EMAIL_FIELDS,
} from '../../lib/validation/content.rules.js';

/** A controller as an app writes one: our DTOs in, our record and error classes named in the responses. */
@Controller('mail')
class MailController {
  @Post()
  @ApiCreatedResponse({ type: EmailLogDto })
  @ApiBadRequestResponse({ type: EmailValidationErrorResponseDto })
  @ApiServiceUnavailableResponse({ type: EmailErrorResponseDto })
  send(@Body() dto: SendEmailDto) {
    return dto.to.length;
  }

  @Post('batch')
  @ApiBody({ type: [BatchEmailItemDto] })
  @ApiCreatedResponse({ type: [EmailLogDto] })
  sendBatch(@Body() items: BatchEmailItemDto[]) {
    return items.length;
  }

  @Get(':id')
  @ApiOkResponse({ type: EmailDetailDto })
  get(@Param('id') id: string) {
    return id;
  }

  @Get(':id/events')
  @ApiOkResponse({ type: [EmailEventDto] })
  events(@Param('id') id: string) {
    return id;
  }
}

type Schema = Record<string, any>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

describe('OpenAPI document built by @nestjs/swagger from our DTOs and response classes', () => {
  let doc: OpenAPIObject;
  let schemas: Record<string, Schema>;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [MailController] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    doc = SwaggerModule.createDocument(app, new DocumentBuilder().setTitle('mail').build());
    schemas = doc.components?.schemas as Record<string, Schema>;
    await app.close();
  });
  const props = (name: string): Record<string, Schema> => schemas[name].properties;
  const response = (path: string, method: 'get' | 'post', status: string): Schema =>
    (doc.paths[path][method]?.responses[status] as Schema).content['application/json'].schema;

  it('names every schema it documents', () => {
    expect(Object.keys(schemas).sort()).toEqual([
      'AttachmentDto',
      'BatchEmailItemDto',
      'EmailDetailDto',
      'EmailErrorResponseDto',
      'EmailEventDto',
      'EmailLogDto',
      'EmailValidationErrorResponseDto',
      'EmailValidationIssueDto',
      'SendEmailDto',
    ]);
  });

  it('SendEmailDto: from and to first, types, required fields and the contract limits', () => {
    const send = schemas.SendEmailDto;
    expect(Object.keys(send.properties)).toEqual([
      'from',
      'to',
      'subject',
      'html',
      'text',
      'templateId',
      'variables',
      'trackOpens',
      'trackClicks',
      'scheduledAt',
      'attachments',
    ]);
    expect([...send.required].sort()).toEqual(['from', 'to']);
    const p = props('SendEmailDto');
    expect(p.from).toMatchObject({ type: 'string', minLength: 1 });
    expect(p.to).toMatchObject({ type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 50 });
    expect(p.subject).toMatchObject({ type: 'string', minLength: 1 });
    expect(p.html).toMatchObject({ type: 'string', nullable: true });
    expect(p.templateId).toMatchObject({ type: 'integer', minimum: 1, nullable: true });
    expect(p.variables).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
    expect(p.trackOpens).toMatchObject({ type: 'boolean', nullable: true });
    expect(p.scheduledAt).toMatchObject({ type: 'string', format: 'date-time', nullable: true });
    expect(p.scheduledAt.description).toMatch(/30 days/);
    expect(p.attachments).toMatchObject({ type: 'array', maxItems: MAX_ATTACHMENTS });
    expect(p.attachments.items).toEqual(ref('AttachmentDto'));
    expect(p.attachments.description).toMatch(/1\.3 MiB/);
  });

  it('BatchEmailItemDto: the content fields only, from and to first', () => {
    expect(Object.keys(props('BatchEmailItemDto'))).toEqual([
      'from',
      'to',
      'subject',
      'html',
      'text',
      'templateId',
      'variables',
      'trackOpens',
      'trackClicks',
    ]);
    expect([...schemas.BatchEmailItemDto.required].sort()).toEqual(['from', 'to']);
    const body = doc.paths['/mail/batch'].post?.requestBody as Schema;
    expect(body.content['application/json'].schema).toEqual({
      type: 'array',
      items: ref('BatchEmailItemDto'),
    });
  });

  it('AttachmentDto: filename 1 to 255, base64 content required', () => {
    expect([...schemas.AttachmentDto.required].sort()).toEqual(['content', 'filename']);
    const p = props('AttachmentDto');
    expect(Object.keys(p)).toEqual(['filename', 'content', 'contentType']);
    expect(p.filename).toMatchObject({ type: 'string', minLength: 1, maxLength: MAX_FILENAME_LENGTH });
    expect(p.content).toMatchObject({ type: 'string', minLength: 1, format: 'byte' });
  });

  it('refused fields are no properties: the schemas accept no other properties and say why', () => {
    for (const [schema, fields] of [
      ['SendEmailDto', Object.keys(UNSUPPORTED_EMAIL_FIELDS)],
      ['BatchEmailItemDto', [...Object.keys(UNSUPPORTED_EMAIL_FIELDS), ...Object.keys(NOT_IN_BATCH_FIELDS)]],
      ['AttachmentDto', Object.keys(UNSUPPORTED_ATTACHMENT_FIELDS)],
    ] as const) {
      expect({ schema, additionalProperties: schemas[schema].additionalProperties }).toEqual({
        schema,
        additionalProperties: false,
      });
      expect(schemas[schema].description).toMatch(/No other properties are accepted/);
      expect(schemas[schema].description).toMatch(/refused with 400/);
      for (const field of fields) {
        expect({ schema, field, property: props(schema)[field] }).toEqual({
          schema,
          field,
          property: undefined,
        });
        expect(schemas[schema].description).toContain(`\`${field}\``);
      }
    }
    for (const field of ['cc', 'bcc', 'replyTo', 'reply_to', 'reply-to', 'headers', 'tags', 'raw', 'mime'])
      expect(props('SendEmailDto')[field]).toBeUndefined();
    expect(props('BatchEmailItemDto').attachments).toBeUndefined();
    expect(props('BatchEmailItemDto').scheduledAt).toBeUndefined();
  });

  it('responses name the record schemas: EmailLog on a send and a batch, EmailDetail, EmailEvent', () => {
    expect(response('/mail', 'post', '201')).toEqual(ref('EmailLogDto'));
    expect(response('/mail/batch', 'post', '201')).toEqual({ type: 'array', items: ref('EmailLogDto') });
    expect(response('/mail/{id}', 'get', '200')).toEqual(ref('EmailDetailDto'));
    expect(response('/mail/{id}/events', 'get', '200')).toEqual({
      type: 'array',
      items: ref('EmailEventDto'),
    });
  });

  it('EmailLogDto has every field of the contract, all required, dates as date-time strings', () => {
    const log = schemas.EmailLogDto;
    const fields = [
      'id',
      'providerEmailId',
      'fromAddress',
      'toAddresses',
      'subject',
      'status',
      'errorMessage',
      'scheduledAt',
      'trackOpens',
      'trackClicks',
      'openedAt',
      'clickedAt',
      'openCount',
      'clickCount',
      'createdAt',
      'updatedAt',
    ];
    expect(Object.keys(log.properties)).toEqual(fields);
    expect([...log.required].sort()).toEqual([...fields].sort());
    expect(log.properties.id).toMatchObject({ type: 'integer' });
    expect(log.properties.toAddresses).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(log.properties.status).toMatchObject({ type: 'string' });
    expect(log.properties.status.enum).toBeUndefined(); // the contract does not close the list
    expect(log.properties.createdAt).toMatchObject({ type: 'string', format: 'date-time' });
    expect(log.properties.openedAt).toMatchObject({ type: 'string', format: 'date-time', nullable: true });

    const detail = schemas.EmailDetailDto;
    expect(Object.keys(detail.properties)).toEqual([...fields, 'html', 'bodyText']);
    expect(detail.properties.html).toMatchObject({ type: 'string', nullable: true });
    expect(detail.required).toContain('bodyText');

    const event = schemas.EmailEventDto;
    expect(Object.keys(event.properties)).toEqual(['id', 'type', 'url', 'occurredAt']);
    expect(event.properties.type).toMatchObject({ type: 'string', enum: ['open', 'click'] });
  });

  it('the 400 body is described with its issues; other error answers by EmailErrorResponseDto', () => {
    expect(response('/mail', 'post', '400')).toEqual(ref('EmailValidationErrorResponseDto'));
    const bad = schemas.EmailValidationErrorResponseDto;
    expect(Object.keys(bad.properties)).toEqual(['statusCode', 'message', 'error', 'outcome', 'issues']);
    expect([...bad.required].sort()).toEqual(['error', 'issues', 'message', 'outcome', 'statusCode']);
    expect(bad.properties.issues).toEqual({ type: 'array', items: ref('EmailValidationIssueDto') });
    expect(bad.properties.outcome).toMatchObject({ enum: ['not-sent'] });
    expect(schemas.EmailValidationIssueDto.properties).toMatchObject({
      path: { type: 'string' },
      message: { type: 'string' },
    });

    expect(response('/mail', 'post', '503')).toEqual(ref('EmailErrorResponseDto'));
    const other = schemas.EmailErrorResponseDto;
    expect([...other.required].sort()).toEqual(['error', 'message', 'statusCode']);
    expect(other.properties.outcome).toMatchObject({ enum: ['not-sent', 'uncertain'] });
    expect(other.properties).toHaveProperty('idempotencyKey');
  });
});
