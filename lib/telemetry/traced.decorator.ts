import type { OtelAttributes as Attributes } from './otel-api.interface.js';
import type { EmailOperation } from './email-telemetry.constants.js';
import type { EmailTelemetry } from './email.telemetry.js';

const bound = new WeakMap<object, EmailTelemetry>();

/** Ties an object (an `EmailService`) to the telemetry its `@Traced` methods report to. */
export function bindTelemetry(owner: object, telemetry: EmailTelemetry | null | undefined): void {
  if (telemetry) bound.set(owner, telemetry);
}

/** What a traced method's arguments say: start attributes and how many messages a send carries. */
export type TracedArgs = (args: unknown[]) => { attributes?: Attributes; size?: number };

/**
 * Runs the method in a span of `operation` when its object was bound to telemetry; as is otherwise.
 * `describe` reads start attributes from the arguments (never an address, subject or body).
 */
export function Traced(operation: EmailOperation, describe?: TracedArgs): MethodDecorator {
  return (_target, _key, descriptor) => {
    const original = descriptor.value as unknown as (...args: unknown[]) => Promise<unknown>;
    const wrapped = function (this: object, ...args: unknown[]): Promise<unknown> {
      const telemetry = bound.get(this);
      if (telemetry === undefined) return original.apply(this, args);
      const { attributes = {}, size = 1 } = describe?.(args) ?? {};
      return telemetry.run(operation, attributes, size, () => original.apply(this, args));
    };
    Object.defineProperty(wrapped, 'name', { value: original.name });
    (descriptor as PropertyDescriptor).value = wrapped;
    return descriptor;
  };
}
