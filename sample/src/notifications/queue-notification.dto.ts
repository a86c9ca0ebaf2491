import { IsString, Length } from 'class-validator';
import { IsEmailAddress } from 'nestjs-transactional-email';

/** Body of `POST /notifications/jobs`: who gets the welcome email. */
export class QueueNotificationDto {
  /** One recipient, `ada@example.com` or `Ada <ada@example.com>`. */
  @IsEmailAddress()
  to!: string;

  /** Shown in the subject and the greeting. */
  @IsString()
  @Length(1, 100)
  name!: string;
}
