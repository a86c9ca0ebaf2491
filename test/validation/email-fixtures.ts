import type { BatchEmailItem, EmailInput } from '../../lib/interfaces/email-input.interface.js';

/** A fixed clock for scheduling cases. */
export const NOW = new Date('2030-01-01T00:00:00.000Z');
export const DAY_MS = 86_400_000;

/** A valid inline single send. */
export function inline(extra: Record<string, unknown> = {}): EmailInput {
  return {
    from: 'Sender <sender@example.com>',
    to: ['ada@example.com'],
    subject: 'Hello',
    text: 'Hi',
    ...extra,
  };
}

/** A valid template-mode single send. */
export function templated(extra: Record<string, unknown> = {}): EmailInput {
  return {
    from: 'sender@example.com',
    to: ['ada@example.com'],
    templateId: 7,
    variables: { name: 'Ada' },
    ...extra,
  };
}

/** `n` distinct valid recipients. */
export function recipients(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `user${i}@example.com`);
}

/** A valid attachment of exactly `bytes` decoded bytes. */
export function attachment(bytes: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { filename: 'file.bin', content: Buffer.alloc(bytes, 7).toString('base64'), ...extra };
}

/** `n` valid batch items. */
export function batch(n: number, extra: Record<string, unknown> = {}): BatchEmailItem[] {
  return Array.from({ length: n }, (_, i) => ({
    from: 'sender@example.com',
    to: [`user${i}@example.com`],
    subject: `Item ${i}`,
    html: '<p>Hi</p>',
    ...extra,
  }));
}

/** `input` without the named keys. */
export function without(input: object, ...keys: string[]): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...input };
  for (const key of keys) delete copy[key];
  return copy;
}
