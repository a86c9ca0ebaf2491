import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { IsEmailAddress } from 'nestjs-transactional-email';

/** Body of `POST /tenants/:tenant/emails`: an email a tenant sends to one of its customers, from its own sender. */
export class TenantEmailDto {
  @ApiProperty({ example: 'wile@example.com', description: "The tenant's customer" })
  @IsEmailAddress()
  to!: string;

  @ApiProperty({ example: 'Your order has shipped', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  subject!: string;

  @ApiProperty({ example: 'It is on its way.', minLength: 1, maxLength: 10_000 })
  @IsString()
  @Length(1, 10_000)
  text!: string;
}
