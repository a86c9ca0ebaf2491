/** What this package uses of `@nestjs/config`. */
export interface ConfigPeer {
  registerAs: (token: string, factory: () => unknown) => unknown;
}

/** `@nestjs/config`, or the error saying why it cannot be used (not installed, or it failed to load). */
export type LoadedConfigPeer = ConfigPeer | Error;
