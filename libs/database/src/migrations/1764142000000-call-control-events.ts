import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The owner's live control of a call (`hangup`, `say`, `instruct`) is stored as the call's events of type `control`,
 * written by the service (no runtime `seq`, as its tool calls): the runtime's control stream reads them after the last
 * one it saw, so a reconnect replays what it missed, and the owner sees them among the call's events. The other kinds
 * the contract names (`dtmf`, `transfer`) are allowed with or without a runtime `seq`; a turn or a note always has
 * one, a tool call or a control never.
 */
export class CallControlEvents1764142000000 implements MigrationInterface {
  name = 'CallControlEvents1764142000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE call_events DROP CONSTRAINT call_events_type_check`);
    await queryRunner.query(`ALTER TABLE call_events DROP CONSTRAINT call_events_check`);
    await queryRunner.query(`
      ALTER TABLE call_events
        ADD CONSTRAINT call_events_type_check
          CHECK (type IN ('transcript', 'note', 'tool_call', 'dtmf', 'transfer', 'control')),
        ADD CONSTRAINT call_events_seq_check
          CHECK (CASE WHEN type IN ('transcript', 'note') THEN seq IS NOT NULL
                      WHEN type IN ('tool_call', 'control') THEN seq IS NULL
                      ELSE true END)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM call_events WHERE type IN ('dtmf', 'transfer', 'control')`);
    await queryRunner.query(`ALTER TABLE call_events DROP CONSTRAINT call_events_seq_check`);
    await queryRunner.query(`ALTER TABLE call_events DROP CONSTRAINT call_events_type_check`);
    await queryRunner.query(`
      ALTER TABLE call_events
        ADD CONSTRAINT call_events_type_check CHECK (type IN ('transcript', 'note', 'tool_call')),
        ADD CONSTRAINT call_events_check CHECK ((type = 'tool_call') = (seq IS NULL))`);
  }
}
