import 'reflect-metadata';
import { Body, Controller, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ApiBody, DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { BatchEmailItemDto, MAX_ATTACHMENTS, MAX_FILENAME_LENGTH, SendEmailDto } from '../../lib/index.js';
import {
  UNSUPPORTED_ATTACHMENT_FIELDS,
  UNSUPPORTED_EMAIL_FIELDS,
} from '../../lib/dto/unsupported-fields.rules.js';

@Controller('mail')
class MailController {
  @Post()
  send(@Body() dto: SendEmailDto) {
    return dto.to.length;
  }

  @Post('batch')
  @ApiBody({ type: [BatchEmailItemDto] })
  sendBatch(@Body() items: BatchEmailItemDto[]) {
    return items.length;
  }
}

type Schema = Record<string, any>;

describe('Swagger document built by @nestjs/swagger from our DTOs', () => {
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

  it('SendEmailDto: types, required fields and the contract limits', () => {
    expect(Object.keys(schemas).sort()).toEqual(['AttachmentDto', 'BatchEmailItemDto', 'SendEmailDto']);
    const send = schemas.SendEmailDto;
    expect([...send.required].sort()).toEqual(['from', 'to']);
    const p = props('SendEmailDto');
    expect(p.from).toMatchObject({ type: 'string', minLength: 1 });
    expect(p.to).toMatchObject({ type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 50 });
    expect(p.subject).toMatchObject({ type: 'string', minLength: 1 });
    expect(p.html).toMatchObject({ type: 'string', nullable: true });
    expect(p.text).toMatchObject({ type: 'string', nullable: true });
    expect(p.templateId).toMatchObject({ type: 'integer', minimum: 1, nullable: true });
    expect(p.variables).toMatchObject({
      type: 'object',
      additionalProperties: { type: 'string' },
      nullable: true,
    });
    expect(p.trackOpens).toMatchObject({ type: 'boolean', nullable: true });
    expect(p.scheduledAt).toMatchObject({ type: 'string', format: 'date-time', nullable: true });
    expect(p.scheduledAt.description).toMatch(/30 days/);
    expect(p.attachments).toMatchObject({ type: 'array', maxItems: MAX_ATTACHMENTS });
    expect(p.attachments.items).toEqual({ $ref: '#/components/schemas/AttachmentDto' });
    expect(p.attachments.description).toMatch(/1\.3 MiB/);
  });

  it('AttachmentDto: filename 1 to 255, base64 content required', () => {
    expect([...schemas.AttachmentDto.required].sort()).toEqual(['content', 'filename']);
    const p = props('AttachmentDto');
    expect(p.filename).toMatchObject({ type: 'string', minLength: 1, maxLength: MAX_FILENAME_LENGTH });
    expect(p.content).toMatchObject({ type: 'string', minLength: 1, format: 'byte' });
    expect(p.contentType).toMatchObject({ type: 'string' });
    expect(p.contentType.nullable).toBeUndefined();
  });

  it('unsupported fields are documented as refused (must be absent), never as accepted', () => {
    for (const [schema, fields] of [
      ['SendEmailDto', Object.keys(UNSUPPORTED_EMAIL_FIELDS)],
      ['BatchEmailItemDto', [...Object.keys(UNSUPPORTED_EMAIL_FIELDS), 'scheduledAt', 'attachments']],
      ['AttachmentDto', Object.keys(UNSUPPORTED_ATTACHMENT_FIELDS)],
    ] as const) {
      for (const field of fields) {
        const p = props(schema)[field];
        expect({ schema, field, not: p?.not }).toEqual({ schema, field, not: {} });
        expect(p.description).toMatch(/refused with 400/);
        expect(schemas[schema].required).not.toContain(field);
      }
    }
  });

  it('the batch route takes an array of BatchEmailItemDto', () => {
    const body = doc.paths['/mail/batch'].post?.requestBody as Schema;
    expect(body.content['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/BatchEmailItemDto' },
    });
    expect([...schemas.BatchEmailItemDto.required].sort()).toEqual(['from', 'to']);
  });
});
