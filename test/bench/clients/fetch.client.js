// What fetch-based email SDKs do: the global fetch of Node, with a JSON body.
import { Agent, setGlobalDispatcher } from 'undici';
import { API_KEY, CONNECTIONS, EMAIL, idempotencyKey } from './payload.js';

const authorization = `Bearer ${API_KEY}`;

async function readJson(res, expected) {
  if (res.status !== expected) {
    await res.arrayBuffer();
    throw new Error(`unexpected status ${res.status}`);
  }
  return res.json();
}

/**
 * Global `fetch`. Its default dispatcher opens as many connections as there are requests in flight,
 * so it is replaced by an undici Agent capped at the same connection count as every other client.
 */
export async function createClient(baseUrl) {
  const agent = new Agent({ connections: CONNECTIONS });
  setGlobalDispatcher(agent);
  const sendUrl = `${baseUrl}/emails`;
  const listUrl = `${baseUrl}/emails?limit=10`;
  return {
    send: async () => {
      const res = await fetch(sendUrl, {
        method: 'POST',
        headers: {
          authorization,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey(),
        },
        body: JSON.stringify(EMAIL),
      });
      return readJson(res, 201);
    },
    list: async () => readJson(await fetch(listUrl, { headers: { authorization } }), 200),
    close: () => agent.close(),
  };
}
