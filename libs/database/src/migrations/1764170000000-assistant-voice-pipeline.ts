import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * An assistant's own LLM (`model`), speech-to-text (`transcriber`) and text-to-speech provider and speed (`voice`;
 * the voice itself stays in `voice_id`). Null: the runtime's own. Nullable columns rewrite nothing.
 */
export class AssistantVoicePipeline1764170000000 implements MigrationInterface {
  name = 'AssistantVoicePipeline1764170000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE assistants
        ADD COLUMN model jsonb,
        ADD COLUMN transcriber jsonb,
        ADD COLUMN voice jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE assistants DROP COLUMN model, DROP COLUMN transcriber, DROP COLUMN voice`);
  }
}
