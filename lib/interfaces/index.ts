export type * from './email-module-options.interface.js';
export type * from './email-records.interface.js';
export type * from './email-input.interface.js';
export type * from './call-options.interface.js';
