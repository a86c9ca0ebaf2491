/** One customer of the app: it sends email under its own account at the service (its own key and domain). */
export interface TenantSeed {
  /** The tenant's id: in the URL (`/tenants/acme/...`), and the account id the email module is given. */
  id: string;
  name: string;
  /** The tenant's sender, on its own verified domain (the account's `defaultFrom`). */
  sender: string;
  /** What its plan allows it to send: recipients per second (the account's `rateLimit`). */
  recipientsPerSecond: number;
}

/**
 * The sample's tenants. The sample's own email (every route outside `/tenants`) keeps using the module's
 * own key, `EMAIL_API_KEY`; each tenant sends with its key instead.
 */
export const TENANTS: readonly TenantSeed[] = [
  { id: 'acme', name: 'Acme Corporation', sender: 'Acme <orders@acme.example.com>', recipientsPerSecond: 10 },
  { id: 'globex', name: 'Globex', sender: 'Globex <hello@globex.example.com>', recipientsPerSecond: 10 },
  { id: 'initech', name: 'Initech', sender: 'Initech <billing@initech.example.com>', recipientsPerSecond: 2 },
];

/** The variable a tenant's API key is read from when the app talks to a real service: `EMAIL_TENANT_ACME_API_KEY`. */
export const tenantKeyVariable = (tenantId: string): string =>
  `EMAIL_TENANT_${tenantId.toUpperCase()}_API_KEY`;

/** Token of the tenants' sandbox mailboxes (a Map by tenant id; null when the app talks to a real service). */
export const TENANT_MAILBOXES = Symbol('TENANT_MAILBOXES');
