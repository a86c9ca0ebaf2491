import { join } from 'node:path';

/**
 * The folder that holds the outbox page's static files, CommonJS build.
 * `npm run build` puts this file in place of `outbox.dir.ts` for the CommonJS build.
 */
export const OUTBOX_ASSETS_DIR = join(__dirname, 'assets');
