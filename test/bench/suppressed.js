// The suppression list a bench loads: `n` addresses, none of them the bench's recipient (the sends measured
// all go, each checked against the whole list), added 1,000 per call as an app's handler would.

/** The address of entry `i`. */
export const suppressedAddress = (i) => `suppressed-${i}@bench.example.com`;

/** Puts `n` addresses on the default list of the app's `EmailModule` (through `EmailSuppressions.add`). */
export async function loadSuppressed(app, n) {
  if (n <= 0) return;
  const { EmailSuppressions } = await import('../../dist/index.js');
  const list = app.get(EmailSuppressions);
  for (let i = 0; i < n; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, n - i) }, (_, k) => suppressedAddress(i + k));
    await list.add(batch, { reason: 'bounced' });
  }
}
