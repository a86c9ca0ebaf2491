import { Body, Controller, Delete, Get, Header, HttpCode, Inject, Post, Query } from '@nestjs/common';
import type { EmailSandbox } from 'nestjs-transactional-email/testing';
import { LOCAL_SANDBOX } from './local-sandbox.lifecycle.js';
import { SandboxBounceDto } from './sandbox-bounce.dto.js';
import { SandboxFaultDto } from './sandbox-fault.dto.js';

/**
 * Only with the embedded sandbox: script its faults and bounces over HTTP, to watch the module and the job
 * processor cope with lost answers, outages and addresses that bounce. Never part of a real app.
 */
@Controller('sandbox')
export class SandboxFaultsController {
  constructor(@Inject(LOCAL_SANDBOX) private readonly sandbox: EmailSandbox) {}

  /** Adds a fault; answers with the rule as the sandbox holds it. */
  @Post('faults')
  addFault(@Body() dto: SandboxFaultDto): object {
    const rule = dto.toRule();
    this.sandbox.faults.add(rule);
    return rule;
  }

  /** Removes every fault. */
  @Delete('faults')
  @HttpCode(204)
  clearFaults(): void {
    this.sandbox.faults.clear();
  }

  /**
   * Makes an address bounce (or complain): mail to it is still accepted, and its record reads `bounced` once
   * sent, as a provider's log would. Answers the addresses the sandbox makes bounce or complain.
   */
  @Post('bounces')
  addBounce(@Body() dto: SandboxBounceDto): object {
    const options = { existing: dto.existing === true };
    if (dto.status === 'complained') this.sandbox.complain(dto.address, options);
    else this.sandbox.bounce(dto.address, options);
    return this.sandbox.bounces();
  }

  /** What the sandbox holds: every message (oldest first, with bodies) and the faults applied so far. */
  @Get()
  state(): object {
    return { messages: this.sandbox.messages(), faultsInjected: this.sandbox.faults.counts() };
  }

  /**
   * The last `last` requests the sandbox received (default 5, at most 100), one per line as
   * `METHOD /path -> status` or `-> fault` (e.g. `POST /emails -> drop-after`): what the module asked, in order.
   */
  @Get('requests')
  @Header('content-type', 'text/plain; charset=utf-8')
  requests(@Query('last') last?: string): string {
    const n = Math.min(Math.max(Number.parseInt(last ?? '5', 10) || 5, 1), 100);
    return this.sandbox
      .requests()
      .slice(-n)
      .map(
        (r) =>
          `${r.method} ${new URL(r.path, 'http://x').pathname} -> ${r.fault ?? r.status ?? 'no answer'}\n`,
      )
      .join('');
  }
}
