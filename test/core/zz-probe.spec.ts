import { Test } from '@nestjs/testing';
import { inspect } from 'node:util';
import { writeFileSync } from 'node:fs';
import { EmailModule } from '../../lib/index.js';
it('size', async () => {
  const ref = await Test.createTestingModule({ imports: [EmailModule.forRoot({ apiKey: 'sk_live_InspectMe_7Hq2ZpL9xW4vN8cR', baseUrl: 'http://127.0.0.1:9', logger: false })] }).compile();
  const h = inspect(ref, { customInspect: true, showHidden: true, depth: Infinity, getters: true });
  const s = inspect(ref, { customInspect: true, showHidden: false, depth: Infinity, getters: true });
  writeFileSync('/tmp/i28c-probe/app.txt', s);
  await ref.close();
});
