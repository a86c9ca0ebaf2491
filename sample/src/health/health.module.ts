import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller.js';

/** Terminus plus the email indicator (which the global `EmailModule` provides). */
@Module({
  imports: [TerminusModule],
  controllers: [HealthController],
})
export class HealthModule {}
