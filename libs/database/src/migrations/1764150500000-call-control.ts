import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Call control. Assistants get where they may transfer a call (`transfer_destinations`, none by default), whether
 * they may end it (`end_call`) and what they do when a machine answers (`voicemail`), null: the defaults. Calls get
 * why they ended (`ended_reason`) and their transfer (`transfer`, the last one tried). A call's events may also be
 * keys pressed (`dtmf`, the runtime's, numbered by it) and transfers (`transfer`, the service's own, unnumbered as
 * its tool calls are); the event kinds themselves came with the owner's live control. Constant defaults and nullable columns rewrite nothing.
 */
export class CallControl1764150500000 implements MigrationInterface {
  name = 'CallControl1764150500000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE assistants
        ADD COLUMN transfer_destinations jsonb NOT NULL DEFAULT '[]',
        ADD COLUMN end_call jsonb,
        ADD COLUMN voicemail jsonb`);
    await queryRunner.query(`ALTER TABLE calls ADD COLUMN ended_reason varchar(32), ADD COLUMN transfer jsonb`);
    // After CallControlEvents1764142000000 (the owner's `control` events), which allowed either for dtmf and transfer.
    await queryRunner.query(`
      ALTER TABLE call_events
        DROP CONSTRAINT call_events_seq_check,
        ADD CONSTRAINT call_events_seq_check
          CHECK ((type IN ('tool_call', 'transfer', 'control')) = (seq IS NULL))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE call_events
        DROP CONSTRAINT call_events_seq_check,
        ADD CONSTRAINT call_events_seq_check
          CHECK (CASE WHEN type IN ('transcript', 'note') THEN seq IS NOT NULL
                      WHEN type IN ('tool_call', 'control') THEN seq IS NULL
                      ELSE true END)`);
    await queryRunner.query(`ALTER TABLE calls DROP COLUMN ended_reason, DROP COLUMN transfer`);
    await queryRunner.query(`
      ALTER TABLE assistants DROP COLUMN transfer_destinations, DROP COLUMN end_call, DROP COLUMN voicemail`);
  }
}
