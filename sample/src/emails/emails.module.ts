import { Module } from '@nestjs/common';
import { EmailsController } from './emails.controller.js';

/** The HTTP face of `EmailService`: sends (single, template, batch) and reads. */
@Module({ controllers: [EmailsController] })
export class EmailsModule {}
