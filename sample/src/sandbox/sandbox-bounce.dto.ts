import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import { IsEmailAddress } from 'nestjs-transactional-email';

/**
 * Body of `POST /sandbox/bounces`: an address the embedded sandbox makes bounce (or complain), as a
 * recipient's server would.
 *
 * @example
 * { "address": "gone@example.com" }
 * { "address": "angry@example.com", "status": "complained", "existing": true }
 */
export class SandboxBounceDto {
  @IsEmailAddress() address!: string;
  /** What its records read once sent. @default 'bounced' */
  @IsOptional() @IsIn(['bounced', 'complained']) status?: 'bounced' | 'complained';
  /** Its sent records already held read so too. @default false */
  @IsOptional() @IsBoolean() existing?: boolean;
}
