import { Module, type DynamicModule } from '@nestjs/common';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { TenantFaultsController } from './tenant-faults.controller.js';
import { TenantsController } from './tenants.controller.js';

/**
 * Email for the app's tenants (`/tenants/...`), each under its own account, queued on the notifications'
 * `EmailQueue`. `accounts` is the `TenantAccountsModule` the email module's resolver comes from (one table
 * for both); `sandbox`: serve `/sandbox/tenants/:tenant/faults` too.
 */
@Module({})
export class TenantsModule {
  static register(accounts: DynamicModule, { sandbox }: { sandbox: boolean }): DynamicModule {
    return {
      module: TenantsModule,
      imports: [accounts, NotificationsModule],
      controllers: [TenantsController, ...(sandbox ? [TenantFaultsController] : [])],
    };
  }
}
