import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { ADDRESS_OK, checkAddress } from './address.rules.js';
import { hasLineBreak } from './content.rules.js';
import { messages } from './validation.constants.js';

/**
 * True when `value` is an address the service's sender and recipient fields accept: `name@example.com` or
 * `Display Name <name@example.com>`, with no CR or LF anywhere.
 *
 * @example
 * isEmailAddress('"Doe, Jane" <jane@example.com>') // true
 * isEmailAddress('jane@localhost')                  // false: the domain needs a dot
 */
export function isEmailAddress(value: unknown): value is string {
  return typeof value === 'string' && checkAddress(value) === ADDRESS_OK;
}

/**
 * class-validator decorator for one address in the same two forms, for your own DTOs.
 *
 * @example
 * class InviteDto { @IsEmailAddress() guest!: string; }
 * @publicApi
 */
export function IsEmailAddress(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isEmailAddress',
      target: target.constructor,
      propertyName: String(propertyName),
      options,
      validator: {
        validate: (value: unknown) => isEmailAddress(value),
        defaultMessage: (args: ValidationArguments) =>
          typeof args.value === 'string' && hasLineBreak(args.value)
            ? messages.crlf(args.property)
            : messages.addressInvalid(args.property),
      },
    });
  };
}
