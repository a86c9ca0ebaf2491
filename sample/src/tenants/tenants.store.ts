import { Inject, Injectable } from '@nestjs/common';
import type { SandboxMailbox } from 'nestjs-transactional-email/testing';
import { TENANT_MAILBOXES, TENANTS, tenantKeyVariable, type TenantSeed } from './tenants.constants.js';

/** A row of the tenants table: the tenant and its email settings (its key is a secret: never answered). */
export interface Tenant extends TenantSeed {
  emailApiKey: string;
}

/**
 * The app's table of tenants. In memory here, filled at boot; an app reads it from its database (a
 * repository, an ORM), which is why it answers with promises. A tenant's key comes from its sandbox
 * mailbox when the sandbox is embedded, else from `EMAIL_TENANT_<ID>_API_KEY`; a tenant with no key is
 * not in the table.
 */
@Injectable()
export class TenantsStore {
  private readonly rows = new Map<string, Tenant>();

  constructor(@Inject(TENANT_MAILBOXES) mailboxes: Map<string, SandboxMailbox> | null) {
    for (const seed of TENANTS) {
      const emailApiKey = mailboxes
        ? mailboxes.get(seed.id)?.apiKey
        : process.env[tenantKeyVariable(seed.id)];
      if (emailApiKey) this.rows.set(seed.id, { ...seed, emailApiKey });
    }
  }

  /** One tenant, or null for an id the table does not hold. */
  async findOne(id: string): Promise<Tenant | null> {
    return Promise.resolve(this.rows.get(id) ?? null);
  }

  /** Every tenant, in the table's order. */
  async findAll(): Promise<Tenant[]> {
    return Promise.resolve([...this.rows.values()]);
  }
}
