/** How long an Idempotency-Key remembers its request and answer (the API replays; the worker purges after). */
export const IDEMPOTENCY_TTL_HOURS = 24;
