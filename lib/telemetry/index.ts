export {
  captureEmailTraceContext,
  runInEmailTraceContext,
  type EmailTraceContext,
} from './trace-context.helpers.js';
