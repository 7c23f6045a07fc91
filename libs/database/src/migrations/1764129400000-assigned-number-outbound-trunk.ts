import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The provider's outbound trunk an operator names for a number bought from a carrier (`phone-numbers:assign
 * --outbound-trunk`), so that calls can be placed from it as from a SIP trunk's number. A SIP trunk's own outbound
 * trunk stays on its `sip_trunks` row, made and deleted by the service; this one is the operator's and the service
 * never deletes it. Adding a nullable column without a default is a change of the catalogue only.
 */
export class AssignedNumberOutboundTrunk1764129400000 implements MigrationInterface {
  name = 'AssignedNumberOutboundTrunk1764129400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE phone_numbers ADD COLUMN outbound_trunk_id varchar(64)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE phone_numbers DROP COLUMN outbound_trunk_id`);
  }
}
