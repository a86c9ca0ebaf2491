import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import type { SandboxFaultRule, SandboxRoute } from 'nestjs-transactional-email/testing';

const ROUTES: SandboxRoute[] = [
  'POST /emails',
  'POST /emails/batch',
  'GET /emails',
  'GET /emails/:id',
  'GET /emails/:id/events',
];
const MODES = ['status', 'delay', 'drop-before', 'drop-after', 'fail-after'] as const;

/**
 * Body of `POST /sandbox/faults`: one scripted fault of the embedded sandbox.
 *
 * @example
 * { "route": "POST /emails", "mode": "drop-after" }          // processed, then the answer is lost
 * { "route": "GET /emails", "mode": "status", "status": 503, "times": 100 }
 * { "route": "POST /emails", "mode": "status", "status": 429, "retryAfter": 20 }   // rate limited: come back in 20 s
 */
export class SandboxFaultDto {
  /** Which operation it hits. @default every operation */
  @IsOptional() @IsIn(ROUTES) route?: SandboxRoute;
  @IsIn(MODES) mode!: (typeof MODES)[number];
  /** For `status` (and `fail-after`): the status to answer. @default 503 */
  @IsOptional() @IsIn([429, 500, 502, 503]) status?: 429 | 500 | 502 | 503;
  /** For `status`: the `Retry-After` header, in seconds (a 429 always has one). @default 1 for a 429, none else */
  @IsOptional() @IsInt() @Min(0) @Max(3600) retryAfter?: number;
  /** For `delay`: how long, in ms. @default 1000 */
  @IsOptional() @IsInt() @Min(0) @Max(60_000) ms?: number;
  /** How many matching requests it hits. @default 1 */
  @IsOptional() @IsInt() @Min(1) times?: number;

  /** The rule for `sandbox.faults.add`. */
  toRule(): SandboxFaultRule {
    const target = { route: this.route ?? '*', times: this.times ?? 1 } as const;
    switch (this.mode) {
      case 'status':
        return {
          ...target,
          mode: 'status',
          status: this.status ?? 503,
          ...(this.retryAfter === undefined ? {} : { retryAfter: this.retryAfter }),
        };
      case 'fail-after':
        return { ...target, mode: 'fail-after', status: this.status === 429 ? 500 : (this.status ?? 500) };
      case 'delay':
        return { ...target, mode: 'delay', ms: this.ms ?? 1000 };
      default:
        return { ...target, mode: this.mode };
    }
  }
}
