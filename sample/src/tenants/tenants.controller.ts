import { randomUUID } from 'node:crypto';
import { Body, Controller, Get, HttpCode, NotFoundException, Param, Post } from '@nestjs/common';
import { EmailService, type EmailLog } from 'nestjs-transactional-email';
import { EmailQueue, type EmailJobStatus } from 'nestjs-transactional-email/queue';
import { TenantEmailDto } from './tenant-email.dto.js';
import { TenantsStore, type Tenant } from './tenants.store.js';

/**
 * Email for the app's tenants, each under its own account: every call names the tenant as `{ account }`,
 * and the module finds its key through `TenantAccounts`. A tenant the table does not hold is answered 404
 * here, with the tenant's name, before any email call (without this check the module refuses it with
 * `EmailAccountError`, which the interceptor answers 404 too, with a fixed message).
 */
@Controller('tenants')
export class TenantsController {
  constructor(
    private readonly tenants: TenantsStore,
    private readonly email: EmailService,
    private readonly queue: EmailQueue,
  ) {}

  /** The tenants: id, name, sender and plan (never a key). */
  @Get()
  async list(): Promise<Array<Omit<Tenant, 'emailApiKey'>>> {
    const rows = await this.tenants.findAll();
    return rows.map(({ emailApiKey: _secret, ...tenant }) => tenant);
  }

  /**
   * Queues an email of the tenant (from its sender) on the same queue as the notifications; answers 202
   * with the job's id. The job id starts with the tenant's id: job ids are one namespace per queue.
   */
  @Post(':tenant/emails')
  @HttpCode(202)
  async enqueue(
    @Param('tenant') tenantId: string,
    @Body() dto: TenantEmailDto,
  ): Promise<{ id: string; idempotencyKey: string; status: 'queued' }> {
    const tenant = await this.tenant(tenantId);
    const { jobId, idempotencyKey } = await this.queue.send(
      { to: [dto.to], subject: dto.subject, text: dto.text }, // no `from`: the account's defaultFrom
      { account: tenant.id, jobId: `${tenant.id}-${randomUUID()}` },
    );
    return { id: jobId, idempotencyKey, status: 'queued' };
  }

  /** The tenant's message log at the service, read with its key: its own email only. */
  @Get(':tenant/emails')
  async emails(@Param('tenant') tenantId: string): Promise<EmailLog[]> {
    const tenant = await this.tenant(tenantId);
    return this.email.list({ account: tenant.id });
  }

  /** One job of the tenant: `state` (waiting, delayed, active, sent, failed), `attempts`, `runAt`, `messageId`. */
  @Get(':tenant/jobs/:id')
  async job(@Param('tenant') tenantId: string, @Param('id') id: string): Promise<EmailJobStatus> {
    const tenant = await this.tenant(tenantId);
    const status = id.startsWith(`${tenant.id}-`) ? await this.queue.status(id) : null;
    if (!status) throw new NotFoundException(`no job ${id} of tenant ${tenant.id}`);
    return status;
  }

  private async tenant(id: string): Promise<Tenant> {
    const tenant = await this.tenants.findOne(id);
    if (!tenant) throw new NotFoundException(`no tenant ${id}`);
    return tenant;
  }
}
