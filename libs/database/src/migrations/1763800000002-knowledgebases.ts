import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class Knowledgebases1763800000002 implements MigrationInterface {
  name = 'Knowledgebases1763800000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE knowledgebases (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        description varchar(255),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX knowledgebases_user_id_id ON knowledgebases (user_id, id)`);

    await queryRunner.query(`
      CREATE TABLE documents (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        knowledgebase_id integer NOT NULL REFERENCES knowledgebases (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        description varchar(255),
        type varchar(16) NOT NULL CHECK (type IN ('website', 'pdf', 'txt', 'docx')),
        status varchar(16) NOT NULL DEFAULT 'processing' CHECK (status IN ('processing', 'active', 'failed')),
        error_message text,
        source_url text,
        source_links jsonb,
        relative_links_limit integer,
        file_name varchar(255),
        file_size integer,
        content_length integer NOT NULL DEFAULT 0,
        sweep_count integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX documents_knowledgebase_id_status ON documents (knowledgebase_id, status)`);
    await queryRunner.query(
      `CREATE INDEX documents_processing_updated_at ON documents (updated_at) WHERE status = 'processing'`,
    );

    await queryRunner.query(`
      CREATE TABLE document_files (
        document_id integer PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
        content bytea NOT NULL
      )`);

    await queryRunner.query(`
      CREATE TABLE document_pages (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        document_id integer NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        position integer NOT NULL,
        url text NOT NULL,
        status varchar(16) NOT NULL,
        http_status integer,
        title text,
        characters integer NOT NULL DEFAULT 0,
        error text
      )`);
    await queryRunner.query(`CREATE INDEX document_pages_document_id ON document_pages (document_id, position)`);

    // unaccent is not immutable (its dictionary could change), so it cannot feed a generated column directly;
    // this wrapper pins the dictionary, which makes it safe to declare immutable.
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS unaccent`);
    await queryRunner.query(`
      CREATE FUNCTION immutable_unaccent(text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $$`);

    // The 'simple' configuration indexes words as they are, so text in any language is searchable;
    // unaccented, so "creme brulee" finds "crème brûlée".
    await queryRunner.query(`
      CREATE TABLE passages (
        id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        knowledgebase_id integer NOT NULL REFERENCES knowledgebases (id) ON DELETE CASCADE,
        document_id integer NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
        position integer NOT NULL,
        content text NOT NULL,
        source_url text,
        search_vector tsvector GENERATED ALWAYS AS (to_tsvector('simple', immutable_unaccent(content))) STORED,
        UNIQUE (document_id, position)
      )`);
    await queryRunner.query(`CREATE INDEX passages_search_vector ON passages USING gin (search_vector)`);
    await queryRunner.query(`CREATE INDEX passages_knowledgebase_id ON passages (knowledgebase_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE passages`);
    await queryRunner.query(`DROP TABLE document_pages`);
    await queryRunner.query(`DROP TABLE document_files`);
    await queryRunner.query(`DROP TABLE documents`);
    await queryRunner.query(`DROP TABLE knowledgebases`);
    await queryRunner.query(`DROP FUNCTION immutable_unaccent(text)`);
  }
}
