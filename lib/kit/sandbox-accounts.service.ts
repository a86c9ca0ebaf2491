import { Injectable } from '@nestjs/common';
import type { EmailAccount, EmailAccountResolver } from '../interfaces/email-account.interface.js';
import type { SandboxMailbox } from '../testing/sandbox.mailbox.js';

/**
 * The accounts of an `EmailTestingModule` made with `accounts`: one sandbox mailbox per account id, and
 * the resolver the module's `EmailModule` finds their keys with (`accounts: <this>`). Inject it to see
 * what each account sent (`expect(accounts.mailbox('tenant-a')).toHaveSent(...)`) and to rotate a key.
 *
 * @example
 * const accounts = moduleRef.get(SandboxAccounts);
 * await email.send(input, { account: 'tenant-a' });
 * expect(accounts.mailbox('tenant-a')).toHaveSentTo('ada@example.org');
 * expect(accounts.mailbox('tenant-b')).not.toHaveSent();
 * @publicApi
 */
@Injectable()
export class SandboxAccounts implements EmailAccountResolver {
  /** The key `resolve` answers for each account: its mailbox's first, or the last `rotateKey` gave. */
  private readonly current = new Map<string, string>();

  /** @internal */
  constructor(
    /** @internal */
    private readonly boxes: ReadonlyMap<string, SandboxMailbox> = new Map(),
  ) {}

  /**
   * What the module's `EmailModule` asks for an account: `{ apiKey, baseUrl }` of its mailbox (the key
   * being the last `rotateKey` gave, else the mailbox's first), or null for an id it does not know.
   */
  resolve(accountId: string): EmailAccount | null {
    const box = this.boxes.get(accountId);
    if (!box) return null;
    return { apiKey: this.current.get(accountId) ?? box.apiKey, baseUrl: box.baseUrl };
  }

  /** The mailbox of an account; throws naming the id when the module has no such account. */
  mailbox(accountId: string): SandboxMailbox {
    const box = this.boxes.get(accountId);
    if (!box) {
      const known = this.ids().map((id) => JSON.stringify(id));
      throw new Error(
        `the test kit has no account ${JSON.stringify(accountId)} (its accounts: ${known.join(', ') || 'none'})`,
      );
    }
    return box;
  }

  /**
   * Rotates an account's key: adds a fresh key to its mailbox and makes it the one `resolve` answers. The
   * old key keeps working until `mailbox(id).revokeKey(old)`. The module uses the new key once its cached
   * answer is gone: after `EmailService.forgetAccount(id)` or `accountCacheTtlMs`. Answers the new key.
   * @example
   * const next = accounts.rotateKey('tenant-a');
   * email.forgetAccount('tenant-a');
   */
  rotateKey(accountId: string): string {
    const key = this.mailbox(accountId).addKey();
    this.current.set(accountId, key);
    return key;
  }

  /** The account ids, in the order they were given. */
  ids(): string[] {
    return [...this.boxes.keys()];
  }
}
