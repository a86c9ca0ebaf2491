import { EmailSandbox } from 'nestjs-transactional-email/testing';

/**
 * With no `EMAIL_BASE_URL` in the environment, starts an embedded `EmailSandbox` on 127.0.0.1 (port
 * `SANDBOX_PORT`, or a free one) and points `EMAIL_BASE_URL` / `EMAIL_API_KEY` at it, so the app's
 * ordinary configuration path (`emailConfig`) picks it up. Returns null when a real service is set.
 * Opens and clicks are tracked by default, so the tracking links in a message's html record events.
 */
export async function startLocalSandbox(env: NodeJS.ProcessEnv = process.env): Promise<EmailSandbox | null> {
  if (env.EMAIL_BASE_URL) return null;
  const port = env.SANDBOX_PORT ? Number(env.SANDBOX_PORT) : 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`SANDBOX_PORT must be a port number (got ${env.SANDBOX_PORT})`);
  }
  const sandbox = await EmailSandbox.start({ port, tracking: { opens: true, clicks: true } });
  env.EMAIL_BASE_URL = sandbox.baseUrl;
  env.EMAIL_API_KEY = sandbox.apiKey;
  return sandbox;
}
