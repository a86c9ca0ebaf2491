import { Body, Controller, Delete, HttpCode, Inject, NotFoundException, Param, Post } from '@nestjs/common';
import type { SandboxMailbox } from 'nestjs-transactional-email/testing';
import { SandboxFaultDto } from '../sandbox/sandbox-fault.dto.js';
import { TENANT_MAILBOXES } from './tenants.constants.js';

/**
 * Only with the embedded sandbox: script faults of one tenant's mailbox (`POST /sandbox/faults` scripts
 * the sample's own), e.g. a 429 that pauses that tenant alone while the others go on. Never part of a real app.
 */
@Controller('sandbox/tenants/:tenant/faults')
export class TenantFaultsController {
  constructor(@Inject(TENANT_MAILBOXES) private readonly mailboxes: Map<string, SandboxMailbox>) {}

  /** Adds a fault to the tenant's mailbox; answers with the rule as the sandbox holds it. */
  @Post()
  add(@Param('tenant') tenant: string, @Body() dto: SandboxFaultDto): object {
    const rule = dto.toRule();
    this.mailbox(tenant).faults.add(rule);
    return rule;
  }

  /** Removes every fault of the tenant's mailbox. */
  @Delete()
  @HttpCode(204)
  clear(@Param('tenant') tenant: string): void {
    this.mailbox(tenant).faults.clear();
  }

  private mailbox(tenant: string): SandboxMailbox {
    const mailbox = this.mailboxes.get(tenant);
    if (!mailbox) throw new NotFoundException(`no tenant ${tenant}`);
    return mailbox;
  }
}
