import { spawn } from 'node:child_process';
const dir = process.argv[2];
const { createClient } = await import(dir + '/test/bench/clients/email-service.client.js');
const child = spawn(process.execPath, [dir + '/test/bench/bench-server.js'], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((r) => child.stdout.once('data', (d) => r(JSON.parse(String(d)).port)));
const c = await createClient(`http://127.0.0.1:${port}`);
const run = async (n) => { let i = 0; await Promise.all(Array.from({ length: 64 }, async () => { while (i++ < n) await c.send(); })); };
await run(3000);
for (let r = 0; r < 3; r++) {
const t0 = process.cpuUsage(); const w0 = performance.now();
await run(20000);
const t = process.cpuUsage(t0);
console.log('cpu us/req', ((t.user + t.system) / 20000).toFixed(1), 'rps', Math.round(20000 / ((performance.now() - w0) / 1000)));
}
await c.close(); child.kill();
