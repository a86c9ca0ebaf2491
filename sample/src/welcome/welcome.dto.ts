import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { IsEmailAddress } from 'nestjs-transactional-email';

/** Body of `POST /welcome`: who to welcome, and the name the template greets. */
export class WelcomeDto {
  @ApiProperty({ example: 'ada@example.com', description: 'The new user' })
  @IsEmailAddress()
  to!: string;

  @ApiProperty({ example: 'Ada', minLength: 1, maxLength: 100 })
  @IsString()
  @Length(1, 100)
  name!: string;
}
