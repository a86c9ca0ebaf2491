import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { EmailHealthIndicator } from 'nestjs-transactional-email';

/** `GET /health`: 200 when the email service answers an authenticated read, 503 otherwise. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly email: EmailHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check(): Promise<HealthCheckResult> {
    return this.health.check([() => this.email.isHealthy('email', { timeoutMs: 2000 })]);
  }
}
