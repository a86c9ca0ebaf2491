import type { DynamicModule } from '@nestjs/common';
import type { EmailModuleOptions } from '../interfaces/email-module-options.interface.js';
import { parseEmailEnv, type EmailEnvOptions } from './email-env.parser.js';
import { configPeer, type LoadedConfigPeer } from '../peers/optional-peer.loader.js';

/**
 * What `EmailModule.forRootAsync` needs to take its options from a config namespace.
 * @publicApi
 */
export interface EmailConfigAsyncOptions {
  imports: Array<DynamicModule | Promise<DynamicModule>>;
  inject: string[];
  useFactory: (config: EmailModuleOptions) => EmailModuleOptions;
}

/**
 * A `@nestjs/config` namespace of the module's options, as `registerAs` makes it.
 * @publicApi
 */
export interface EmailConfigFactory {
  /** Reads and checks the environment variables (called by `ConfigModule`). */
  (): EmailModuleOptions;
  /** Injection token of the namespace, e.g. `'CONFIGURATION(email)'`. */
  readonly KEY: string;
  /**
   * Options for `EmailModule.forRootAsync` that import the namespace and use it as is.
   * @example EmailModule.forRootAsync(emailConfig.asProvider())
   */
  asProvider(): EmailConfigAsyncOptions;
}

/**
 * Options of `createEmailConfig`.
 * @publicApi
 */
export interface EmailConfigOptions extends EmailEnvOptions {
  /** Name of the config namespace (`ConfigService.get('email.timeoutMs')`). @default 'email' */
  namespace?: string;
}

type RegisterAs = (token: string, factory: () => EmailModuleOptions) => EmailConfigFactory;

function define(target: object, key: string, descriptor: PropertyDescriptor): void {
  Object.defineProperty(target, key, { configurable: false, enumerable: false, ...descriptor });
}

/**
 * When `@nestjs/config` cannot be used (not installed, or it failed to load): a namespace that can
 * still be made and imported, and throws `error` (saying what to install) when it is used.
 */
function unusable(error: Error): RegisterAs {
  return () => {
    const fail = (): never => {
      throw error;
    };
    const standIn = (): never => fail();
    define(standIn, 'KEY', { get: fail });
    define(standIn, 'asProvider', { get: fail });
    return standIn as unknown as EmailConfigFactory;
  };
}

/** `registerAs` of the loaded `@nestjs/config`, or the failing stand-in when it is not there. */
function registerAsOf(peer: LoadedConfigPeer): RegisterAs {
  return peer instanceof Error ? unusable(peer) : (peer.registerAs as RegisterAs);
}

const registerAs = registerAsOf(configPeer);

/**
 * A config namespace made with `register` (the loaded `registerAs`, or its stand-in when
 * `@nestjs/config` is missing).
 */
function defineEmailConfig(register: RegisterAs, options: EmailConfigOptions = {}): EmailConfigFactory {
  const { namespace = 'email', prefix } = options;
  return register(namespace, () => parseEmailEnv(process.env, { prefix }));
}

/**
 * Makes a config namespace that reads the module's options from environment variables
 * (see `parseEmailEnv`), for example a second one for a named instance.
 *
 * @example
 * export const marketingEmailConfig = createEmailConfig({ namespace: 'marketingEmail', prefix: 'MARKETING_EMAIL_' });
 * EmailModule.forRootAsync({ ...marketingEmailConfig.asProvider(), name: 'marketing' })
 * @publicApi
 */
export function createEmailConfig(options: EmailConfigOptions = {}): EmailConfigFactory {
  return defineEmailConfig(registerAs, options);
}

/**
 * The `email` config namespace (`registerAs('email', ...)`), read from `EMAIL_API_KEY`,
 * `EMAIL_BASE_URL`, `EMAIL_TIMEOUT_MS` and the other variables of `parseEmailEnv`. Bad variables stop
 * the boot with one error naming each of them. Needs `@nestjs/config`.
 *
 * @example
 * EmailModule.forRootAsync({
 *   imports: [ConfigModule.forFeature(emailConfig)],
 *   inject: [emailConfig.KEY],
 *   useFactory: (config: ConfigType<typeof emailConfig>) => config,
 * })
 * @publicApi
 */
export const emailConfig: EmailConfigFactory = createEmailConfig();
