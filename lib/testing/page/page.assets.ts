import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PAGE_ASSETS_DIR } from './page.dir.js';

/** Path of the sandbox page under the sandbox's base path (the page's own URLs are relative to it). */
export const PAGE_PATH = '/__sandbox/outbox/';

const FILES: Record<string, string> = {
  '/': 'page.html',
  '/page.js': 'page.js',
  '/page.css': 'page.css',
};
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};
const cache = new Map<string, Buffer>();

/** The static file of the page served at `path` (relative to the page), or null when there is none. */
export function pageAsset(path: string): { body: Buffer; type: string } | null {
  const name = FILES[path];
  if (!name) return null;
  let body = cache.get(name);
  if (!body) {
    body = readFileSync(join(PAGE_ASSETS_DIR, name));
    cache.set(name, body);
  }
  return { body, type: TYPES[name.slice(name.lastIndexOf('.') + 1)] };
}

/** Headers every page answer carries: no sniffing, no caching, no referrer, no use by other origins. */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

/**
 * Content-Security-Policy of the page: its own script and style files only, no inline script, data
 * from its own origin, frames only from the message html route, never framed by another page.
 */
export function pagePolicy(origin: string, pagePath: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `frame-src ${origin}${pagePath}api/messages/`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Content-Security-Policy of a message's html: a sandbox with no script, no forms, no popups and
 * no network at all (inline styles and data: images only), framed only by the sandbox page.
 */
export const MESSAGE_POLICY =
  "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; frame-ancestors 'self'";

/**
 * Content-Security-Policy of a message's html with "load remote images" on: the same sandbox (no
 * script, forms, popups, fonts or styles from the network), but images from any http(s) address.
 */
export const MESSAGE_POLICY_IMAGES =
  "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data: http: https:; font-src data:; frame-ancestors 'self'";

/** The sandbox's own open pixel, left out when remote images load so that viewing never records an open. */
export const OWN_PIXEL = /<img src="[^"]*\/__sandbox\/track\/[^"]*\/open\.gif"[^>]*>/g;
