// What every client sends and how it connects: one valid single email, the same key, the same pool size.
import { randomUUID } from 'node:crypto';

/** Connections per client: the EmailModule default, given to every other client too. */
export const CONNECTIONS = 16;

/** The key every client sends as a Bearer token (the bench server only checks that one is there). */
export const API_KEY = 'sk_bench_0123456789abcdef';

const html =
  '<!doctype html><html><body><h1>Thanks for your order</h1>' +
  '<p>Order <b>#10427</b> is confirmed and will ship within two working days.</p>' +
  '<table>' +
  Array.from(
    { length: 6 },
    (_, i) =>
      `<tr><td>Item ${i + 1}: notebook, A5, dotted</td><td>1</td><td>EUR ${(4.5 + i).toFixed(2)}</td></tr>`,
  ).join('') +
  '</table><p>Questions? Just answer this email.</p></body></html>';

/** A valid `EmailInput` in inline mode (about 1 KB of JSON). */
export const EMAIL = Object.freeze({
  from: 'Shop <orders@shop.example.com>',
  to: ['ada@example.com', 'grace@example.com'],
  subject: 'Your order #10427 is confirmed',
  html,
  text: 'Thanks for your order. Order #10427 is confirmed and will ship within two working days.',
  trackOpens: false,
  trackClicks: false,
});

/** A fresh Idempotency-Key, made the way the module makes its own. */
export function idempotencyKey() {
  return `nte_${randomUUID()}`;
}
