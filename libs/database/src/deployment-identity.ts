/** This deployment's id (migration 1764120000000), which the provider objects it makes carry as their owner. */
export async function deploymentId(db: { query(sql: string): Promise<{ deployment_id: string }[]> }): Promise<string> {
  const [row] = await db.query(`SELECT deployment_id FROM deployment_identity`);
  if (!row) throw new Error('deployment_identity is empty: run the migrations');
  return row.deployment_id;
}
