export function sourceHash(root: string): string;
export const BUILD_HASH_FILE: string;
