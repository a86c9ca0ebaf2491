/**
 * Optional peers whose major follows NestJS's, with the range for each Nest major: their latest major is
 * ES modules only (for NestJS 12), which a NestJS 11 app (CommonJS) cannot load under Jest. Kept in step
 * with the install lines of docs/getting-started.md.
 */
const NEST_BOUND_PEERS: Readonly<Record<string, { nest11: string; nest12: string }>> = {
  '@nestjs/config': { nest11: '^4', nest12: '^12' },
  '@nestjs/terminus': { nest11: '^11', nest12: '^12' },
};

/** The text of the error thrown when an optional peer dependency is used but not installed. */
export function missingPeerMessage(specifier: string, feature: string): string {
  const bound = NEST_BOUND_PEERS[specifier];
  const install = bound
    ? `npm install ${specifier}@${bound.nest12} in a NestJS 12 app, npm install ${specifier}@${bound.nest11} in a NestJS 11 app`
    : `npm install ${specifier}`;
  return (
    `${feature} needs the optional peer dependency ${specifier}, which is not installed. ` +
    `Install it next to nestjs-transactional-email: ${install}`
  );
}

/** An optional peer dependency is used but not installed; the message says what to install. */
export class MissingPeerError extends Error {
  constructor(
    readonly specifier: string,
    feature: string,
    cause: unknown,
  ) {
    super(missingPeerMessage(specifier, feature), { cause });
    this.name = 'MissingPeerError';
  }
}
