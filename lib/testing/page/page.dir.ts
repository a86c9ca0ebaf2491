import { fileURLToPath } from 'node:url';

/**
 * The folder that holds the sandbox page's static files, ES module build.
 * The CommonJS build replaces this file with `page.dir.cjs.ts` (no `import.meta` there).
 */
export const PAGE_ASSETS_DIR = fileURLToPath(new URL('./assets/', import.meta.url));
