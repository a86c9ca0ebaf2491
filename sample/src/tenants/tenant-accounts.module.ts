import { Module, type DynamicModule } from '@nestjs/common';
import type { EmailSandbox } from 'nestjs-transactional-email/testing';
import { openTenantMailboxes } from './tenant-mailboxes.js';
import { TenantAccounts } from './tenant-accounts.service.js';
import { TENANT_MAILBOXES } from './tenants.constants.js';
import { TenantsStore } from './tenants.store.js';

/**
 * The tenants table and the resolver the email module finds their keys with. It needs nothing of the email
 * module, so `EmailModule.forRootAsync` can import it (`AppModule`); `TenantsModule` imports the same one.
 */
@Module({})
export class TenantAccountsModule {
  /** `sandbox`: the embedded sandbox (each tenant gets a mailbox of it), or null with a real service. */
  static register(sandbox: EmailSandbox | null): DynamicModule {
    return {
      module: TenantAccountsModule,
      providers: [
        { provide: TENANT_MAILBOXES, useFactory: () => (sandbox ? openTenantMailboxes(sandbox) : null) },
        TenantsStore,
        TenantAccounts,
      ],
      exports: [TENANT_MAILBOXES, TenantsStore, TenantAccounts],
    };
  }
}
