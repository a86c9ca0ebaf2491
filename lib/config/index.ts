export {
  createEmailConfig,
  emailConfig,
  type EmailConfigAsyncOptions,
  type EmailConfigFactory,
  type EmailConfigOptions,
} from './email.config.js';
export { EMAIL_ENV_VARIABLES, parseEmailEnv, type EmailEnvOptions } from './email-env.parser.js';
export { EmailEnvError } from './email-env.error.js';
