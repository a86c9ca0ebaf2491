import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/**
 * Serves the OpenAPI document at `/docs` (page) and `/docs-json`. The package's DTOs carry their own
 * OpenAPI metadata, so `SendEmailDto` and friends show their fields and limits with no decorator here.
 */
export function setUpSwagger(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('nestjs-transactional-email sample')
    .setDescription('Sends and reads email through nestjs-transactional-email.')
    .build();
  SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, config));
}
