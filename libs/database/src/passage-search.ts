import { Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PassageHit } from '@app/contracts';
import { queryPool } from './pool-query';
import { ReadReplicas } from './read-replicas';
import { parseSearchQuery } from './search-query';

/** The most passages one search scores; candidates come from the query's rarest words first. */
export const SEARCH_CANDIDATE_CAP = 200;

/** A word in more than this share of a knowledgebase's passages is walked to, not read from the full-text index. */
export const COMMON_WORD_SHARE = 0.05;

/** The most related words one query word brings, the closest first. */
export const EXPANSIONS_PER_WORD = 5;

/**
 * Ranks in one statement:
 * - `terms`: the query's meaningful words as the knowledgebase's language indexes them (stemmed, stop words
 *   dropped). A word the knowledgebase never uses is replaced by its nearest words one or two edits away.
 * - `expanded`: for the words typed as common words (`expandable`), and for their runs that are phrasal verbs
 *   (a term of their own: "call off"), the related words this knowledgebase uses (search_related_lexemes: WordNet's
 *   synonyms, derivations and similar adjectives for English, and for a word this knowledgebase does not use, its
 *   neighbours by their word vectors), the closest
 *   EXPANSIONS_PER_WORD, each at its relation's weight. They count for the word they expand, never as words of
 *   their own, so a passage holding a word and its synonym counts the word once.
 * - `absorbed`: the words of a phrasal verb of two meaningful words or more that relates words here ("get", "rid"
 *   of "get rid of") are scored as that one concept, at most at the weight of the words it stands for and without
 *   their own related words, so a passage saying "get" is no answer to "get rid of" (one of one meaningful word,
 *   "come after", stays the word: it is rarely meant as the phrase). They seed as words of their own still.
 * - `matches`: each term's words with a weight from their rarity in this knowledgebase (an idf), discounted
 *   for corrections and expansions; an expansion never weighs more than the word itself would (its idf is
 *   taken at the more common of the two), so the word as typed ranks first. For a word the knowledgebase does
 *   not use (nor a misspelling of one) the expansions stand in for it; for one it uses, its rarer expansions (under
 *   COMMON_WORD_SHARE) seed as one more rare word, after the rarer words, so they never multiply what the word's
 *   own seed reads; a common word is walked to together with its expansions.
 * - `candidates`: passages holding all terms, then those of the rarest words, at most the cap. The full-text
 *   index leads with the knowledgebase (btree_gin), so a seed reads only this knowledgebase's postings of a word,
 *   whatever other knowledgebases hold it.
 *   Common words (in more than COMMON_WORD_SHARE of the passages) stay out of the index: `walked` finds their
 *   passages by the knowledgebase's btree, and only when the rarer words leave room under the cap.
 * - `hits`: where the query's words stand in each candidate; only those words are taken out of its vector
 *   (setweight marks them, ts_filter keeps them), as unnesting whole vectors would cost more than the rest.
 * - score (BM25): over the distinct terms a passage holds, the term's weight times its count in the passage
 *   saturated and normalised for the passage's length, tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / average)),
 *   with k1 = 1.2 and b = 0.75, the length counted in distinct words and averaged over the candidates (the
 *   knowledgebase keeps no total length, and keeping one would cost every insert). A word and its expansions count
 *   as one term, so the sum is the passage's coverage of the question's distinct concepts. Then up to half as much
 *   again when the terms stand within three words of each other. On the tuning part of the benchmark's questions,
 *   both a further factor for the share of the concepts covered and a larger proximity bonus (up to double)
 *   ranked fewer answers in the top 3.
 * - highlight: the passage's sentence whose distinct terms weigh most (the first of equals), its matched words
 *   marked.
 */
const SEARCH_SQL = `
WITH config AS (
  SELECT knowledgebase_search_config($2) AS name
),
filters AS (
  SELECT (SELECT tsquery_and_agg(query) FROM unnest($4::text[]) phrase,
                 LATERAL phraseto_tsquery(config.name::regconfig, phrase) query WHERE numnode(query) > 0) AS required,
         (SELECT tsquery_or_agg(query) FROM unnest($5::text[]) phrase,
                 LATERAL phraseto_tsquery(config.name::regconfig, phrase) query WHERE numnode(query) > 0) AS excluded
    FROM config
),
terms AS (
  SELECT DISTINCT lexeme AS term
    FROM config, unnest($3::text[]) word, unnest(tsvector_to_array(passage_search_vector(config.name, word))) lexeme
),
expandable AS (
  SELECT DISTINCT lexeme AS term
    FROM config, unnest($9::text[]) word, unnest(tsvector_to_array(passage_search_vector(config.name, word))) lexeme
  UNION
  -- Runs of words that may be a phrasal verb ("call off"), keyed as search_related_lexemes keys them; a run that
  -- is none relates nothing.
  SELECT key FROM config, unnest($11::text[]) run, LATERAL (SELECT search_phrase_key(config.name, run) AS key) phrase
   WHERE key IS NOT NULL
),
total AS (
  SELECT greatest(coalesce((SELECT passages FROM knowledgebase_search_stats WHERE knowledgebase_id = $2), 0), 1)::float8
         AS passages
),
known AS (
  SELECT terms.term, vocabulary.lexeme, vocabulary.passages, 1.0::float8 AS discount
    FROM terms JOIN knowledgebase_lexemes vocabulary
      ON vocabulary.knowledgebase_id = $2 AND vocabulary.lexeme = terms.term AND vocabulary.passages > 0
),
-- A word's misspellings mostly keep its first letter: those are read from the btree (by initial and length, well
-- under a millisecond); the trigram index, 5-7 ms a word over a knowledgebase's vocabulary, is asked only for a
-- word with no same-initial neighbour (a misspelt first letter).
misspelt AS (
  SELECT terms.term FROM terms
   WHERE length(terms.term) >= 4 AND NOT EXISTS (SELECT 1 FROM known WHERE known.term = terms.term)
),
same_initial AS (
  SELECT misspelt.term, vocabulary.lexeme, vocabulary.passages
    FROM misspelt JOIN knowledgebase_lexemes vocabulary
      ON vocabulary.knowledgebase_id = $2 AND left(vocabulary.lexeme, 1) = left(misspelt.term, 1)
     AND length(vocabulary.lexeme) BETWEEN length(misspelt.term) - 2 AND length(misspelt.term) + 2
   WHERE vocabulary.passages > 0
     AND levenshtein(vocabulary.lexeme, misspelt.term) <= CASE WHEN length(misspelt.term) >= 7 THEN 2 ELSE 1 END
),
corrected AS (
  SELECT term, lexeme, passages, 0.6::float8 AS discount FROM (
    SELECT candidate.*, row_number() OVER (PARTITION BY term ORDER BY levenshtein(lexeme, term), passages DESC, lexeme)
           AS closeness
      FROM (SELECT * FROM same_initial
            UNION ALL
            -- lower(), as the trigram index has it: an index over the bare column would also serve the exact
            -- look-ups above and below, far slower than the primary key.
            SELECT misspelt.term, vocabulary.lexeme, vocabulary.passages
              FROM misspelt JOIN knowledgebase_lexemes vocabulary
                ON vocabulary.knowledgebase_id = $2 AND lower(vocabulary.lexeme) % misspelt.term
             WHERE NOT EXISTS (SELECT 1 FROM same_initial WHERE same_initial.term = misspelt.term)
               AND vocabulary.passages > 0
               AND levenshtein(vocabulary.lexeme, misspelt.term) <= CASE WHEN length(misspelt.term) >= 7 THEN 2 ELSE 1 END
           ) candidate
  ) ranked
   WHERE closeness <= 2
),
expanded AS (
  SELECT expandable.term, related.lexeme, related.passages, related.discount
    FROM expandable CROSS JOIN LATERAL (
      SELECT vocabulary.lexeme, vocabulary.passages, relation.weight::float8 AS discount
        FROM config, search_related_lexemes relation
        JOIN knowledgebase_lexemes vocabulary
          ON vocabulary.knowledgebase_id = $2 AND vocabulary.lexeme = relation.related AND vocabulary.passages > 0
       WHERE relation.search_config = config.name AND relation.lexeme = expandable.term
         AND NOT EXISTS (SELECT 1 FROM terms WHERE terms.term = relation.related)
         -- A neighbour in meaning stands in only for a word this knowledgebase does not use.
         AND (NOT relation.neighbour OR NOT EXISTS (SELECT 1 FROM known WHERE known.term = expandable.term))
       ORDER BY relation.weight DESC, vocabulary.passages DESC
       LIMIT $10) related
),
-- A phrasal verb of two meaningful words or more ("get rid of") that relates words here is one concept: its words
-- are scored within it (as its concept), never above the words it stands for, and without their own related
-- words ("get": go, become). They still seed as words of their own, a common one walked to as before.
absorbed AS (
  SELECT lexeme AS word, min(key) AS phrase
    FROM config, unnest($11::text[]) run, LATERAL (SELECT search_phrase_key(config.name, run) AS key) phrase,
         unnest(tsvector_to_array(passage_search_vector(config.name, run))) lexeme
   WHERE key IS NOT NULL AND EXISTS (SELECT 1 FROM expanded WHERE expanded.term = key)
     AND length(passage_search_vector(config.name, run)) >= 2
   GROUP BY lexeme
),
found AS (
  SELECT found.term, found.lexeme, found.passages, found.expansion,
         found.discount * ln(1 + total.passages / greatest(found.passages, coalesce(own.passages, 0))) AS weight,
         ('''' || replace(replace(found.lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery AS query
    FROM (SELECT *, false AS expansion FROM known UNION ALL SELECT *, false FROM corrected
          UNION ALL SELECT *, true FROM expanded) found
    CROSS JOIN total
    LEFT JOIN known own ON found.expansion AND own.term = found.term
),
matches AS (
  SELECT found.term, coalesce(absorbed.phrase, found.term) AS concept, found.lexeme, found.passages, found.expansion,
         CASE WHEN absorbed.phrase IS NULL THEN found.weight
              ELSE least(found.weight, (SELECT max(phrase.weight) FROM found phrase WHERE phrase.term = absorbed.phrase))
         END AS weight,
         found.query
    FROM found LEFT JOIN absorbed ON absorbed.word = found.term
   WHERE absorbed.phrase IS NULL OR NOT found.expansion
),
term_queries AS (
  SELECT term,
         tsquery_or_agg(query) FILTER (WHERE NOT expansion OR NOT has_own) AS query,
         tsquery_or_agg(query) AS every_query,
         coalesce(min(passages) FILTER (WHERE NOT expansion), sum(passages)) AS passages
    FROM (SELECT *, bool_or(NOT expansion) OVER (PARTITION BY term) AS has_own FROM matches) matches
   GROUP BY term
),
-- The rarer expansions of a word the knowledgebase uses seed on their own, as one more rare "word".
related_queries AS (
  SELECT matches.term, tsquery_or_agg(matches.query) AS query, sum(matches.passages) AS passages
    FROM matches, total
   WHERE matches.expansion AND matches.passages <= total.passages * $8
     AND EXISTS (SELECT 1 FROM matches own WHERE own.term = matches.term AND NOT own.expansion)
   GROUP BY matches.term
),
seeds AS (
  SELECT required AS query, 0 AS priority, false AS common
    FROM filters WHERE required IS NOT NULL AND (SELECT count(*) FROM term_queries) > 0
  UNION ALL
  SELECT (SELECT tsquery_and_agg(query) FROM term_queries WHERE term_queries.passages <= total.passages * $8), 0, false
    FROM filters, total
   WHERE required IS NULL
     AND (SELECT count(*) FROM term_queries WHERE term_queries.passages <= total.passages * $8) > 1
  UNION ALL
  -- A common word is walked to with its expansions: the walk reads the same passages whatever it looks for.
  SELECT CASE WHEN rarest.passages > total.passages * $8 THEN rarest.every_query ELSE rarest.query END,
         rarest.passages, rarest.passages > total.passages * $8 FROM (
    SELECT query, every_query, passages, sum(passages) OVER (ORDER BY passages, term) - passages AS before
      FROM (SELECT term, query, every_query, passages FROM term_queries
            UNION ALL
            SELECT term || ' ', query, query, passages FROM related_queries) seeded) rarest, total
   WHERE before < $7 AND (SELECT required FROM filters) IS NULL
),
candidates AS (
  SELECT hit.id FROM seeds CROSS JOIN LATERAL (
    SELECT passage.id FROM passages passage
     WHERE NOT seeds.common AND passage.search_vector @@ seeds.query AND passage.knowledgebase_id = $2
     LIMIT $7) hit
   WHERE NOT seeds.common
   GROUP BY hit.id ORDER BY min(seeds.priority) LIMIT $7
),
-- A word in a large share of the passages is found faster by walking the knowledgebase's passages than by building
-- its whole bitmap from the full-text index: at a share of s, the cap is met after about cap / s passages. The
-- inner LIMIT keeps the condition out of the scan, so off the full-text index (a concatenation did, copying every
-- vector walked: 1.3 ms of a question of common words), and the cast takes the walk's own btree (an expression
-- the seeds never write, so that no plan of theirs can walk instead of reading the index). Only when the query has
-- a common word and the rarer words bring too few candidates (both are one-time filters: otherwise the walk never
-- starts), and never over more than 40 times the cap: a word in at least 5% of the passages fills the cap within
-- that, on average.
walked AS (
  SELECT passage.id FROM (
    SELECT id, search_vector FROM passages
     WHERE EXISTS (SELECT 1 FROM seeds WHERE seeds.common)
       AND (SELECT count(*) FROM candidates) < $7
       AND knowledgebase_id::bigint = $2
     -- In id order, which only the walk's btree has (over id::bigint: the primary key's order over id made the
     -- planner read other knowledgebases' passages first). Unordered, a scan started where another had got to
     -- (synchronize_seqscans) answered the same question with other passages from one run to the next.
     ORDER BY id::bigint
     LIMIT $7 * 40) passage
   WHERE passage.search_vector @@ (SELECT tsquery_or_agg(query) FROM seeds WHERE seeds.common)
   -- The cap again, whatever room the rarer words left: taking only that room measured faster (a question of common
   -- words 0.74 of the time) but lost answers the walk reaches (docs/benchmarks.md, section 9).
   LIMIT $7
),
chosen AS (
  SELECT id FROM candidates UNION SELECT id FROM walked
),
-- The candidates' mean length is taken here, once: as a subquery of the scoring it ran once per hit (loops=337).
scored AS (
  SELECT passage.id, length(passage.search_vector) AS length,
         greatest(avg(length(passage.search_vector)) OVER (), 1)::float8 AS average,
         ts_filter(setweight(passage.search_vector, 'A', (SELECT array_agg(lexeme) FROM matches)), '{a}') AS found
    FROM chosen JOIN passages passage ON passage.id = chosen.id, filters
   WHERE (filters.required IS NULL OR passage.search_vector @@ filters.required)
     AND (filters.excluded IS NULL OR NOT passage.search_vector @@ filters.excluded)
),
-- OFFSET 0 keeps the candidates' words apart from the join, so the query's words are hashed once, not once a
-- candidate (0.35 ms of a question scoring 331 candidates).
hits AS (
  SELECT entry.id, entry.length, entry.average, matches.concept AS term, matches.weight, word.position
    FROM (SELECT scored.id, scored.length, scored.average, found.lexeme, found.positions
            FROM scored, unnest(scored.found) found OFFSET 0) entry
    JOIN matches ON matches.lexeme = entry.lexeme,
         unnest(entry.positions) word(position)
),
coverage AS (
  SELECT per_term.id,
         sum(per_term.weight * per_term.occurrences * (1.2 + 1)
             / (per_term.occurrences + 1.2 * (1 - 0.75 + 0.75 * per_term.length / per_term.average))) AS weight,
         count(*) AS terms
    FROM (SELECT id, term, max(weight) AS weight, count(*) AS occurrences, min(length) AS length,
                 min(average) AS average
            FROM hits GROUP BY id, term) per_term
   GROUP BY per_term.id
),
closeness AS (
  SELECT id, count(*) FILTER (WHERE term <> previous_term AND position - previous_position <= 3) AS close_pairs
    FROM (SELECT id, term, position, lag(term) OVER near AS previous_term, lag(position) OVER near AS previous_position
            FROM hits WINDOW near AS (PARTITION BY id ORDER BY position)) ordered
   GROUP BY id
),
best AS (
  SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rank FROM (
    SELECT coverage.id,
           coverage.weight * (1 + 0.5 * least(1, closeness.close_pairs::float8 / greatest(coverage.terms - 1, 1)))
           AS score
      FROM coverage JOIN closeness USING (id)) ranked
   ORDER BY score DESC, id
   LIMIT $6
)
SELECT passage.id, passage.document_id, document.name AS document_name, passage.content, passage.source_url, best.score,
       ts_headline(config.name::regconfig, answer.sentence, (SELECT tsquery_or_agg(query) FROM matches),
                   'HighlightAll=true, StartSel=**, StopSel=**') AS highlight
  FROM best
  JOIN passages passage ON passage.id = best.id AND passage.user_id = $1
  JOIN documents document ON document.id = passage.document_id
  CROSS JOIN config
  -- Only the first $12 are highlighted (the rest, asked for by a fusion that shows few of them, go without).
  LEFT JOIN LATERAL (
    SELECT part.sentence
      FROM regexp_split_to_table(passage.content, '(?<=[.!?])\\s+') WITH ORDINALITY AS part(sentence, at),
           -- OFFSET 0 keeps the sentence's words computed once, not once for every word of the query.
           LATERAL (SELECT tsvector_to_array(passage_search_vector(config.name, part.sentence)) AS words OFFSET 0) sentence
     WHERE best.rank <= $12
     ORDER BY (SELECT coalesce(sum(weight), 0) FROM (
                 SELECT max(matches.weight) AS weight FROM matches WHERE matches.lexeme = ANY (sentence.words)
                  GROUP BY matches.concept) per_term) DESC,
              part.at
     LIMIT 1) answer ON true
 ORDER BY best.score DESC, best.id`;

/** Passage search over one knowledgebase; the caller has checked the knowledgebase is the owner's. */
@Injectable()
export class PassageSearch {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Optional() private readonly replicas?: ReadReplicas,
  ) {}

  /**
   * Runs as an unnamed statement of the extended protocol: PostgreSQL parses it and plans it at bind time for the
   * knowledgebase and words at hand, on every run. A named statement would keep one plan made for any knowledgebase
   * after its fifth run, and that plan walked a knowledgebase's passages past other tenants' rows (40 ms where the
   * plan for the knowledgebase took 13; docs/benchmarks.md section 9); holding it off took a connection setting
   * (`plan_cache_mode`), which does not follow the client through a pooler in transaction mode (PgBouncer), where
   * named statements fail outright. Nothing here lasts beyond the statement, so any pooler mode serves it.
   */
  async search(
    ownerId: number,
    knowledgebaseId: number,
    query: string,
    limit: number,
    candidateCap = SEARCH_CANDIDATE_CAP,
    highlighted = limit,
  ): Promise<PassageHit[]> {
    const [text, values] = this.statement(ownerId, knowledgebaseId, query, limit, candidateCap, highlighted);
    if (values[2].length === 0) return [];
    // On a replica fresh enough for the account (see ReadReplicas), else on the primary; straight on the pool.
    return this.replicas
      ? this.replicas.query<PassageHit>(ownerId, text, values)
      : queryPool<PassageHit>(this.dataSource, text, values);
  }

  /** The statement and its parameters, for the benchmark to explain. */
  statement(
    ownerId: number,
    knowledgebaseId: number,
    query: string,
    limit: number,
    candidateCap = SEARCH_CANDIDATE_CAP,
    highlighted = limit,
  ): [
    string,
    [number, number, string[], string[], string[], number, number, number, string[], number, string[], number],
  ] {
    const { words, phrases, excluded, expandable, runs } = parseSearchQuery(query);
    return [
      SEARCH_SQL,
      [
        ownerId,
        knowledgebaseId,
        words,
        phrases,
        excluded,
        limit,
        candidateCap,
        COMMON_WORD_SHARE,
        expandable,
        EXPANSIONS_PER_WORD,
        runs,
        highlighted,
      ],
    ];
  }
}
