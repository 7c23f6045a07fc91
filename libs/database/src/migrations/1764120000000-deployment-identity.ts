import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * This deployment's id, made once with its database. The telephony provider's objects carry it, so the reconcile
 * removes only what this deployment made: staging and production may share a LiveKit project, and neither may
 * delete the other's trunks. A restored backup keeps the id, and with it the trunks it made.
 */
export class DeploymentIdentity1764120000000 implements MigrationInterface {
  name = 'DeploymentIdentity1764120000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE deployment_identity (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        deployment_id uuid NOT NULL DEFAULT gen_random_uuid()
      )`);
    await queryRunner.query(`INSERT INTO deployment_identity DEFAULT VALUES`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE deployment_identity`);
  }
}
