import type { DynamicModule } from '@nestjs/common';
import type { EmailModuleOptions } from '../interfaces/email-module-options.interface.js';
import { parseEmailEnv, type EmailEnvOptions } from './email-env.parser.js';
import { importPeer, MissingPeerError, requirePeer } from './optional-peer.loader.js';

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

const FEATURE = 'emailConfig';

function define(target: object, key: string, descriptor: PropertyDescriptor): void {
  Object.defineProperty(target, key, { configurable: false, enumerable: false, ...descriptor });
}

/** When `@nestjs/config` is not installed: a namespace that fails, saying what to install, when used. */
function missing(error: MissingPeerError): RegisterAs {
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

/**
 * When `@nestjs/config` is installed but cannot be loaded synchronously here (a runtime without
 * `require(esm)`, such as Jest's ESM mode on Node 20): the same marks `registerAs` gives a factory.
 */
function withoutRequire(specifier: string): RegisterAs {
  return (token, factory) => {
    const key = `CONFIGURATION(${token})`;
    define(factory, 'PARTIAL_CONFIGURATION_KEY', { value: token });
    define(factory, 'KEY', { value: key });
    const forFeature = async (): Promise<DynamicModule> => {
      const config = await importPeer<typeof import('@nestjs/config')>(specifier, FEATURE);
      return config.ConfigModule.forFeature(factory as never);
    };
    const asProvider = (): EmailConfigAsyncOptions => ({
      imports: [forFeature()],
      inject: [key],
      useFactory: (config) => config,
    });
    define(factory, 'asProvider', { value: asProvider });
    return factory as EmailConfigFactory;
  };
}

/**
 * `registerAs` of `@nestjs/config`, loaded on demand: this package must load without it.
 * @internal exported for tests
 */
export function loadRegisterAs(specifier = '@nestjs/config'): RegisterAs {
  try {
    return requirePeer<{ registerAs: RegisterAs }>(specifier, FEATURE).registerAs;
  } catch (err) {
    return err instanceof MissingPeerError ? missing(err) : withoutRequire(specifier);
  }
}

const registerAs = loadRegisterAs();

/**
 * A config namespace made with `register` (the loaded `registerAs`, or its stand-in when
 * `@nestjs/config` is missing).
 * @internal not exported from the package: specs use it to run the "not installed" path.
 */
export function defineEmailConfig(
  register: RegisterAs,
  options: EmailConfigOptions = {},
): EmailConfigFactory {
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
