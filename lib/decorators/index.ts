export { getEmailHealthIndicatorToken, getEmailServiceToken } from './email-instance.tokens.js';
export { InjectEmailHealthIndicator, InjectEmailService } from './inject-email-service.decorator.js';
