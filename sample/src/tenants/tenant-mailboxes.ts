import type { EmailSandbox, SandboxMailbox } from 'nestjs-transactional-email/testing';
import { TENANTS } from './tenants.constants.js';

/**
 * With the embedded sandbox: one mailbox per tenant, as each tenant has its own account at the service. A
 * mailbox has its own API key, verified domain (the tenant's sender's), message log and scripted faults;
 * the sandbox's outbox page lists each in its mailbox switcher.
 */
export function openTenantMailboxes(sandbox: EmailSandbox): Map<string, SandboxMailbox> {
  return new Map(
    TENANTS.map((tenant) => {
      const domain = tenant.sender.replace(/^.*@|>$/g, '');
      return [tenant.id, sandbox.mailbox({ name: tenant.id, domains: [domain] })];
    }),
  );
}
