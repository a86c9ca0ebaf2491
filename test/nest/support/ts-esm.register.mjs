import { register } from 'node:module';

register('./ts-esm.hooks.mjs', import.meta.url);
