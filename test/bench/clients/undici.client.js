// The floor: an undici Pool with a hand-built request, and nothing else.
import { Pool } from 'undici';
import { API_KEY, CONNECTIONS, EMAIL, idempotencyKey } from './payload.js';

const authorization = `Bearer ${API_KEY}`;

async function readJson(res, expected) {
  if (res.statusCode !== expected) {
    await res.body.dump();
    throw new Error(`unexpected status ${res.statusCode}`);
  }
  return JSON.parse(await res.body.text());
}

/** Raw `undici` Pool `request`: JSON body, Authorization and Idempotency-Key headers, parsed answer. */
export async function createClient(baseUrl) {
  const pool = new Pool(baseUrl, { connections: CONNECTIONS });
  return {
    send: async () => {
      const res = await pool.request({
        method: 'POST',
        path: '/emails',
        headers: {
          authorization,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey(),
        },
        body: JSON.stringify(EMAIL),
      });
      return readJson(res, 201);
    },
    list: async () => {
      const res = await pool.request({ method: 'GET', path: '/emails?limit=10', headers: { authorization } });
      return readJson(res, 200);
    },
    close: () => pool.close(),
  };
}
