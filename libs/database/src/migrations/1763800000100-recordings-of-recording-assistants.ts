import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A call shows `recording_url` only when its assistant records (the spec: "only when a recording is available and
 * enabled"). Ingestion now keeps the URL only then; this clears the ones kept before for assistants that do not
 * record. Only rows with a URL are touched, through the assistant's own calls.
 */
export class RecordingsOfRecordingAssistants1763800000100 implements MigrationInterface {
  name = 'RecordingsOfRecordingAssistants1763800000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      UPDATE calls SET recording_url = NULL
        FROM assistants
       WHERE assistants.id = calls.assistant_id AND NOT assistants.record AND calls.recording_url IS NOT NULL`);
  }

  async down(): Promise<void> {
    // The URLs cleared are not kept anywhere: nothing to restore.
  }
}
