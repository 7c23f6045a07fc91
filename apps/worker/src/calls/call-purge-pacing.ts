/**
 * How the retention run paces itself: calls removed per statement, and the rest after each statement as a multiple
 * of the time it took. Measured (docs/benchmarks.md, section 7): 1,000 a statement with as long again at rest
 * raised ingestion's p99 by 30% while it ran; 250 with three times as long at rest by 2-10%, still removing about
 * 9,000 calls a second. bench/calls.ts paces its run with the same figures.
 */
export const CALL_PURGE_BATCH = 250;
export const CALL_PURGE_REST = 3;
