// The real `@opentelemetry/api` fits the structural types lib/telemetry declares for it (so our published
// types need not name the optional peer). Checked by `tsc -p test/types` in `npm run lint`.
import * as api from '@opentelemetry/api';
import type { OtelApiModule } from '../../lib/interfaces/otel-api.interface.js';

export const fits: OtelApiModule = api;
