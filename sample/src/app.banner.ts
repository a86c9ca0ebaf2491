import { TENANTS, tenantKeyVariable } from './tenants/tenants.constants.js';

/** What the banner names: the app's URL and what the sample started for it (null: the user's own). */
export interface BannerParts {
  url: string;
  sandbox: { baseUrl: string; apiKey: string; uiUrl: string | null } | null;
  redisUrl: string | null;
  postgresUrl: string | null;
  /** True when OTEL=console registered the console exporters. */
  telemetry: boolean;
}

/**
 * The lines `main.ts` prints once the sample listens (docs/sample.md shows them; the tour spec checks
 * that the page and this function agree).
 */
export function sampleBanner({ url, sandbox, redisUrl, postgresUrl, telemetry }: BannerParts): string[] {
  const lines = [`Sample app listening on ${url}  (Ctrl+C to stop)`];
  if (sandbox) {
    lines.push(
      `Email: embedded sandbox at ${sandbox.baseUrl} (test key ${sandbox.apiKey}); nothing leaves this machine.`,
      sandbox.uiUrl
        ? `  See what it received:  open ${sandbox.uiUrl} in a browser  (or: curl ${url}/emails)`
        : `  See what it received:  curl ${url}/emails`,
      `  Use a real service:    EMAIL_BASE_URL=https://... EMAIL_API_KEY=... npm run sample`,
    );
  } else {
    lines.push(`Email: service at ${process.env.EMAIL_BASE_URL} (key from EMAIL_API_KEY)`);
  }
  lines.push(
    redisUrl
      ? `Queue: embedded redis-server at ${redisUrl} (stopped with the app; set REDIS_URL to use your own)`
      : `Queue: Redis at ${process.env.REDIS_URL}`,
    postgresUrl
      ? `Outbox: embedded PostgreSQL at ${postgresUrl} (stopped with the app; set DATABASE_URL to use your own)`
      : `Outbox: PostgreSQL at DATABASE_URL`,
    `  An order and its confirmation in one transaction:  curl -X POST ${url}/orders -H 'content-type: application/json' -d '{"email":"ada@example.com","item":"tea"}'`,
    `  The same, rolled back (no email):                  curl -X POST ${url}/orders/rolled-back -H 'content-type: application/json' -d '{"email":"ada@example.com","item":"tea"}'`,
    `Tenants: ${TENANTS.map((t) => t.id).join(', ')}, each with its own account (${
      sandbox ? 'a mailbox in the sandbox' : `key from ${tenantKeyVariable('<id>')}`
    }):  curl ${url}/tenants`,
    `Try:  curl ${url}/health   API page: ${url}/docs`,
    telemetry
      ? 'Traces: printed to this console (OTEL=console)'
      : 'Traces: OTEL=console npm run sample prints them',
  );
  return lines;
}
