import { Injectable } from '@nestjs/common';
import type { EmailAccount, EmailAccountResolver } from 'nestjs-transactional-email';
import { TenantsStore } from './tenants.store.js';

/**
 * How the email module finds a tenant's account (`accounts` in `AppModule`): called with the account id a
 * call names (`{ account: 'acme' }`), it reads the tenant's row and answers its key, sender and limits.
 * The module keeps the answer for `accountCacheTtlMs` (60 s); `EmailService.forgetAccount(id)` drops it
 * at once, e.g. after a tenant rotated its key. A queued job stores the tenant's id, never its key.
 */
@Injectable()
export class TenantAccounts implements EmailAccountResolver {
  constructor(private readonly tenants: TenantsStore) {}

  async resolve(accountId: string): Promise<EmailAccount | null> {
    const tenant = await this.tenants.findOne(accountId);
    if (tenant === null) return null; // unknown: the call is refused (EmailAccountError), nothing is sent or queued
    return {
      apiKey: tenant.emailApiKey,
      defaultFrom: tenant.sender,
      rateLimit: { recipients: { limit: tenant.recipientsPerSecond, intervalMs: 1000 } },
    };
  }
}
