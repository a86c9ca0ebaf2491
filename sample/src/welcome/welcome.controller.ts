import { Body, Controller, Inject, Post } from '@nestjs/common';
import type { ConfigType } from '@nestjs/config';
import { EmailService, type EmailLog } from 'nestjs-transactional-email';
import { sampleConfig } from '../sample.config.js';
import { WelcomeDto } from './welcome.dto.js';
import { sampleTemplates } from './welcome.templates.js';

/** A typed template send: the template's variables are checked by TypeScript and before the request. */
@Controller('welcome')
export class WelcomeController {
  constructor(
    private readonly email: EmailService,
    @Inject(sampleConfig.KEY) private readonly settings: ConfigType<typeof sampleConfig>,
  ) {}

  @Post()
  welcome(@Body() dto: WelcomeDto): Promise<EmailLog> {
    return this.email.send(
      sampleTemplates.welcome({ from: this.settings.from, to: [dto.to], variables: { name: dto.name } }),
    );
  }
}
