/** Token of the app's own pg Pool (the one its orders are written with). */
export const ORDERS_POOL = Symbol('ORDERS_POOL');
