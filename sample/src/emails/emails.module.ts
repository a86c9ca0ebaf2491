import { Module } from '@nestjs/common';
import { EmailsController } from './emails.controller.js';
import { SuppressionsController } from './suppressions.controller.js';

/** The HTTP face of `EmailService`: sends (single, template, batch) and reads; and the suppression list. */
@Module({ controllers: [EmailsController, SuppressionsController] })
export class EmailsModule {}
