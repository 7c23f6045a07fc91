import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { SEEDED_LANGUAGES } from './seeded-languages';

/** Snowball stemmers Postgres may ship, by ISO 639-1 code; only those this server has are used. */
const STEMMERS: Record<string, string> = {
  ar: 'arabic',
  ca: 'catalan',
  da: 'danish',
  de: 'german',
  el: 'greek',
  en: 'english',
  es: 'spanish',
  eu: 'basque',
  fi: 'finnish',
  fr: 'french',
  ga: 'irish',
  hi: 'hindi',
  hu: 'hungarian',
  hy: 'armenian',
  id: 'indonesian',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  nl: 'dutch',
  no: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
};

/**
 * Search by meaning rather than by exact words: a text search configuration per language (stemming and stop
 * words, accents ignored), each knowledgebase's vocabulary with the number of passages holding each word (the
 * rarity that ranking weighs and the dictionary misspellings are corrected against), and the columns of
 * website refreshes.
 */
export class SearchLanguagesAndRefresh1763800000030 implements MigrationInterface {
  name = 'SearchLanguagesAndRefresh1763800000030';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS fuzzystrmatch`);

    // Word tokens that may carry accents go through unaccent before the language's dictionary.
    await queryRunner.query(`CREATE TEXT SEARCH CONFIGURATION kb_simple (COPY = pg_catalog.simple)`);
    await queryRunner.query(
      `ALTER TEXT SEARCH CONFIGURATION kb_simple ALTER MAPPING FOR word, hword, hword_part WITH public.unaccent, simple`,
    );
    await queryRunner.query(`ALTER TABLE languages ADD COLUMN search_config text`);
    const available: { dictname: string }[] = await queryRunner.query(
      `SELECT dictname FROM pg_ts_dict WHERE dictname = ANY($1::text[])`,
      [Object.values(STEMMERS).map((name) => `${name}_stem`)],
    );
    const stems = new Set(available.map((row) => row.dictname));
    for (const [, iso2] of SEEDED_LANGUAGES) {
      const stemmer = STEMMERS[iso2];
      if (!stemmer || !stems.has(`${stemmer}_stem`)) continue;
      await queryRunner.query(`CREATE TEXT SEARCH CONFIGURATION kb_${stemmer} (COPY = pg_catalog.${stemmer})`);
      await queryRunner.query(
        `ALTER TEXT SEARCH CONFIGURATION kb_${stemmer}
           ALTER MAPPING FOR word, hword, hword_part WITH public.unaccent, ${stemmer}_stem`,
      );
      await queryRunner.query(`UPDATE languages SET search_config = $1 WHERE iso_2 = $2`, [`kb_${stemmer}`, iso2]);
    }

    await queryRunner.query(`ALTER TABLE knowledgebases ADD COLUMN language_id integer REFERENCES languages (id)`);

    // to_tsvector with a configuration named in text is stable, not immutable; the configurations are created
    // here and never altered afterwards, which makes the promise safe for a generated column.
    await queryRunner.query(`
      CREATE FUNCTION passage_search_vector(config text, content text) RETURNS tsvector
        LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
        AS $$ SELECT to_tsvector(config::regconfig, content) $$`);
    await queryRunner.query(`
      CREATE FUNCTION knowledgebase_search_config(knowledgebase integer) RETURNS text
        LANGUAGE sql STABLE PARALLEL SAFE
        AS $$ SELECT coalesce((SELECT language.search_config FROM knowledgebases kb
                                 JOIN languages language ON language.id = kb.language_id
                                WHERE kb.id = knowledgebase), 'kb_simple') $$`);

    await queryRunner.query(`ALTER TABLE passages DROP COLUMN search_vector`);
    await queryRunner.query(`ALTER TABLE passages ADD COLUMN search_config text NOT NULL DEFAULT 'kb_simple'`);
    await queryRunner.query(`
      ALTER TABLE passages ADD COLUMN search_vector tsvector
        GENERATED ALWAYS AS (passage_search_vector(search_config, content)) STORED`);
    // Compressed in the row rather than in the TOAST table: ranking reads the vectors of every candidate.
    await queryRunner.query(`ALTER TABLE passages ALTER COLUMN search_vector SET STORAGE MAIN`);
    await queryRunner.query(`CREATE INDEX passages_search_vector ON passages USING gin (search_vector)`);

    // A passage takes its knowledgebase's configuration when written. The share lock makes a language change
    // wait for passages being written, so the re-index that follows it sees them all.
    await queryRunner.query(`
      CREATE FUNCTION passages_set_search_config() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM 1 FROM knowledgebases WHERE id = NEW.knowledgebase_id FOR SHARE;
        NEW.search_config := knowledgebase_search_config(NEW.knowledgebase_id);
        RETURN NEW;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER passages_set_search_config BEFORE INSERT ON passages
        FOR EACH ROW EXECUTE FUNCTION passages_set_search_config()`);

    await queryRunner.query(`
      CREATE TABLE knowledgebase_lexemes (
        knowledgebase_id integer NOT NULL REFERENCES knowledgebases (id) ON DELETE CASCADE,
        lexeme text NOT NULL,
        passages integer NOT NULL,
        PRIMARY KEY (knowledgebase_id, lexeme)
      )`);
    await queryRunner.query(
      `CREATE INDEX knowledgebase_lexemes_trigram ON knowledgebase_lexemes USING gin (lexeme gin_trgm_ops)`,
    );
    // Misspellings are looked for among the words of about the same length with the same first letter.
    await queryRunner.query(
      `CREATE INDEX knowledgebase_lexemes_initial ON knowledgebase_lexemes (knowledgebase_id, left(lexeme, 1), length(lexeme))`,
    );
    await queryRunner.query(`CREATE AGGREGATE tsquery_and_agg(tsquery) (SFUNC = tsquery_and, STYPE = tsquery)`);
    await queryRunner.query(`CREATE AGGREGATE tsquery_or_agg(tsquery) (SFUNC = tsquery_or, STYPE = tsquery)`);
    await queryRunner.query(`
      CREATE TABLE knowledgebase_search_stats (
        knowledgebase_id integer PRIMARY KEY REFERENCES knowledgebases (id) ON DELETE CASCADE,
        passages integer NOT NULL
      )`);

    // Statement-level, from the transition tables: one upsert per distinct word per statement, in key order
    // so concurrent writers to one knowledgebase lock the same rows in the same order. Counts reaching zero
    // stay as rows (searches ignore them), which keeps deletes free of races with concurrent inserts.
    await queryRunner.query(`
      CREATE FUNCTION passages_count_lexemes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
          UPDATE knowledgebase_lexemes counted SET passages = counted.passages - gone.passages
            FROM (SELECT knowledgebase_id, lexeme, count(*)::int AS passages
                    FROM old_rows, unnest(tsvector_to_array(search_vector)) AS lexeme
                   GROUP BY knowledgebase_id, lexeme) gone
           WHERE counted.knowledgebase_id = gone.knowledgebase_id AND counted.lexeme = gone.lexeme;
          UPDATE knowledgebase_search_stats stats SET passages = stats.passages - gone.passages
            FROM (SELECT knowledgebase_id, count(*)::int AS passages FROM old_rows GROUP BY knowledgebase_id) gone
           WHERE stats.knowledgebase_id = gone.knowledgebase_id;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
          INSERT INTO knowledgebase_lexemes (knowledgebase_id, lexeme, passages)
          SELECT knowledgebase_id, lexeme, count(*)::int
            FROM new_rows, unnest(tsvector_to_array(search_vector)) AS lexeme
           GROUP BY knowledgebase_id, lexeme
           ORDER BY knowledgebase_id, lexeme
          ON CONFLICT (knowledgebase_id, lexeme)
            DO UPDATE SET passages = knowledgebase_lexemes.passages + excluded.passages;
          INSERT INTO knowledgebase_search_stats (knowledgebase_id, passages)
          SELECT knowledgebase_id, count(*)::int FROM new_rows GROUP BY knowledgebase_id ORDER BY knowledgebase_id
          ON CONFLICT (knowledgebase_id)
            DO UPDATE SET passages = knowledgebase_search_stats.passages + excluded.passages;
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER passages_count_lexemes_insert AFTER INSERT ON passages
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION passages_count_lexemes()`);
    await queryRunner.query(`
      CREATE TRIGGER passages_count_lexemes_update AFTER UPDATE ON passages
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION passages_count_lexemes()`);
    await queryRunner.query(`
      CREATE TRIGGER passages_count_lexemes_delete AFTER DELETE ON passages
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION passages_count_lexemes()`);

    // Passages written before this migration.
    await queryRunner.query(`
      INSERT INTO knowledgebase_lexemes (knowledgebase_id, lexeme, passages)
      SELECT knowledgebase_id, lexeme, count(*)::int
        FROM passages, unnest(tsvector_to_array(search_vector)) AS lexeme
       GROUP BY knowledgebase_id, lexeme`);
    await queryRunner.query(`
      INSERT INTO knowledgebase_search_stats (knowledgebase_id, passages)
      SELECT knowledgebase_id, count(*)::int FROM passages GROUP BY knowledgebase_id`);

    // Website refreshes.
    await queryRunner.query(`
      ALTER TABLE documents
        ADD COLUMN refresh_interval_hours integer,
        ADD COLUMN next_refresh_at timestamptz,
        ADD COLUMN last_refreshed_at timestamptz,
        ADD COLUMN last_refresh jsonb`);
    await queryRunner.query(
      `CREATE INDEX documents_next_refresh_at ON documents (next_refresh_at) WHERE next_refresh_at IS NOT NULL`,
    );
    await queryRunner.query(`ALTER TABLE document_pages ADD COLUMN content_hash text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE document_pages DROP COLUMN content_hash`);
    await queryRunner.query(`
      ALTER TABLE documents
        DROP COLUMN refresh_interval_hours, DROP COLUMN next_refresh_at,
        DROP COLUMN last_refreshed_at, DROP COLUMN last_refresh`);
    await queryRunner.query(`DROP TRIGGER passages_count_lexemes_insert ON passages`);
    await queryRunner.query(`DROP TRIGGER passages_count_lexemes_update ON passages`);
    await queryRunner.query(`DROP TRIGGER passages_count_lexemes_delete ON passages`);
    await queryRunner.query(`DROP TRIGGER passages_set_search_config ON passages`);
    await queryRunner.query(`DROP FUNCTION passages_count_lexemes()`);
    await queryRunner.query(`DROP FUNCTION passages_set_search_config()`);
    await queryRunner.query(`DROP TABLE knowledgebase_search_stats`);
    await queryRunner.query(`DROP AGGREGATE tsquery_and_agg(tsquery)`);
    await queryRunner.query(`DROP AGGREGATE tsquery_or_agg(tsquery)`);
    await queryRunner.query(`DROP TABLE knowledgebase_lexemes`);
    await queryRunner.query(`ALTER TABLE passages DROP COLUMN search_vector`);
    await queryRunner.query(`ALTER TABLE passages DROP COLUMN search_config`);
    await queryRunner.query(`
      ALTER TABLE passages ADD COLUMN search_vector tsvector
        GENERATED ALWAYS AS (to_tsvector('simple', immutable_unaccent(content))) STORED`);
    await queryRunner.query(`CREATE INDEX passages_search_vector ON passages USING gin (search_vector)`);
    await queryRunner.query(`DROP FUNCTION knowledgebase_search_config(integer)`);
    await queryRunner.query(`DROP FUNCTION passage_search_vector(text, text)`);
    await queryRunner.query(`ALTER TABLE knowledgebases DROP COLUMN language_id`);
    const configs: { cfgname: string }[] = await queryRunner.query(
      `SELECT cfgname FROM pg_ts_config WHERE cfgname LIKE 'kb\\_%'`,
    );
    for (const { cfgname } of configs) await queryRunner.query(`DROP TEXT SEARCH CONFIGURATION ${cfgname}`);
    await queryRunner.query(`ALTER TABLE languages DROP COLUMN search_config`);
  }
}
