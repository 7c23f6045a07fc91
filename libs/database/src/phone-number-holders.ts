/**
 * SQL for the provider's outbound trunk calls from the number with id `numberId` (an SQL expression) go through: its
 * SIP trunk's, else the one an operator named for a number bought from a carrier; null when it has neither.
 */
export const outboundTrunkOf = (numberId: string): string =>
  // Aliases of their own, so that `numberId` can name a column of the caller's `p` or `t`.
  `(SELECT COALESCE(caller_trunk.outbound_trunk_id, caller_number.outbound_trunk_id)
      FROM phone_numbers caller_number LEFT JOIN sip_trunks caller_trunk ON caller_trunk.phone_number_id = caller_number.id
     WHERE caller_number.id = ${numberId})`;

/** What a caller is told when a number has a holder already (Laravel's `unique` message). */
export const PHONE_NUMBER_TAKEN = 'The phone number has already been taken.';

/**
 * Whether a phone number row other than `exceptId` holds `number`: any account's for a number in E.164 (the provider
 * routes an inbound call by the number alone), the account's own for an extension. The unique indexes of migration
 * 1763800000120 say the same; this answers before anything is provisioned.
 */
export async function heldByAnother(
  db: { query(sql: string, parameters: unknown[]): Promise<unknown[]> },
  number: string,
  exceptId: number,
  userId: number,
): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM phone_numbers
      WHERE phone_number = $1 AND id <> $2 AND (phone_number LIKE '+%' OR user_id = $3) LIMIT 1`,
    [number, exceptId, userId],
  );
  return rows.length > 0;
}
