import { fileURLToPath } from 'node:url';

/**
 * The folder that holds the outbox page's static files, ES module build.
 * The CommonJS build replaces this file with `outbox.dir.cjs.ts` (no `import.meta` there).
 */
export const OUTBOX_ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));
