import { join } from 'node:path';

/**
 * The folder that holds the sandbox page's static files, CommonJS build.
 * `npm run build` puts this file in place of `page.dir.ts` for the CommonJS build.
 */
export const PAGE_ASSETS_DIR = join(__dirname, 'assets');
