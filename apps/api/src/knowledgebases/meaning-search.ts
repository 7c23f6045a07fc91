import { Inject, Injectable, Logger } from '@nestjs/common';
import type { PassageHit } from '@app/contracts';
import { AppConfig } from '@app/config';
import { type KnowledgebaseVectors, PassageEmbeddingsRepository, parseSearchQuery } from '@app/database';
import { MODEL_PROVIDER, type ModelProvider, embeddingsModelKey } from '@app/model-provider';
import { errorMessage } from '@app/platform';

/** Queries whose vectors a process keeps (about 2-12 KB each, by the model's dimensions). */
export const QUERY_VECTORS_KEPT = 1000;
/**
 * The knowledgebase vectors a process keeps, in bytes: 64 MB holds 32,000 passages of 512 dimensions (or 10,000 of
 * 1,536). The least recently searched knowledgebase goes first. A knowledgebase whose vectors alone would be larger
 * is searched by its words only: reading them on every search would take that much memory per search in flight
 * (2 GB for a million passages), and an exact scan of them far longer than a search may (docs/api/knowledgebases.md).
 */
export const KNOWLEDGEBASE_VECTORS_KEPT_BYTES = 64 * 1024 * 1024;
/**
 * Reciprocal rank fusion's constant (Cormack et al., 2009): a passage's share is 1 / (k + its rank) in each list.
 * Under the paper's 60, so the first ranks by words stay apart from the rest: at 60 a passage somewhere in both
 * lists outranked the first by words, which fell out of the top 3 for 7 questions of the benchmark's (10 and a
 * quarter weight: none), chosen on its tuning part and the project's questions (docs/benchmarks.md, section 9).
 */
export const FUSION_K = 10;
/**
 * What a rank by meaning counts against the same rank by words: under 1, so a passage that holds the query's exact
 * words keeps its place over one that only sounds like it (docs/benchmarks.md, section 9).
 */
export const MEANING_WEIGHT = 0.25;
/** Nearest passages taken by meaning, and lexical results fused with them. */
export const FUSED_DEPTH = 20;

/** A map that forgets its least recently used entries beyond `capacity` (measured by `size`). */
class LeastRecentlyUsed<Value> {
  private readonly entries = new Map<string, Value>();
  private used = 0;

  constructor(
    private readonly capacity: number,
    private readonly size: (value: Value) => number = () => 1,
  ) {}

  get(key: string): Value | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: Value): void {
    this.delete(key);
    if (this.size(value) > this.capacity) return;
    this.entries.set(key, value);
    this.used += this.size(value);
    for (const [oldest, kept] of this.entries) {
      if (this.used <= this.capacity) break;
      this.entries.delete(oldest);
      this.used -= this.size(kept);
    }
  }

  private delete(key: string): void {
    const value = this.entries.get(key);
    if (value === undefined) return;
    this.entries.delete(key);
    this.used -= this.size(value);
  }
}

/** The `count` passages of `vectors` nearest to `query` (both unit length), nearest first. */
export function nearest(vectors: KnowledgebaseVectors, query: Float32Array, count: number): number[] {
  const { ids, dimensions, vectors: data } = vectors;
  if (dimensions !== query.length) return [];
  const best: { id: number; score: number }[] = [];
  // Four sums at once: the dependency chain is a quarter as long (3.4 ms at 10,000 x 512 where one sum took 9).
  const whole = dimensions - (dimensions % 4);
  for (let row = 0; row < ids.length; row++) {
    const offset = row * dimensions;
    let a = 0;
    let b = 0;
    let c = 0;
    let d = 0;
    for (let at = 0; at < whole; at += 4) {
      a += data[offset + at] * query[at];
      b += data[offset + at + 1] * query[at + 1];
      c += data[offset + at + 2] * query[at + 2];
      d += data[offset + at + 3] * query[at + 3];
    }
    for (let at = whole; at < dimensions; at++) a += data[offset + at] * query[at];
    const score = a + b + c + d;
    if (best.length === count && score <= best[count - 1].score) continue;
    let place = best.length;
    while (place > 0 && best[place - 1].score < score) place--;
    best.splice(place, 0, { id: ids[row], score });
    if (best.length > count) best.pop();
  }
  return best.map((entry) => entry.id);
}

/**
 * Search by meaning, with the operator's model provider: the query's vector (kept for repeats) against every passage
 * vector of the knowledgebase (an exact scan in this process over vectors read from PostgreSQL and kept while they
 * are unchanged), fused with the lexical ranking by reciprocal rank. Without an embeddings model it is never used.
 */
@Injectable()
export class MeaningSearch {
  private readonly logger = new Logger(MeaningSearch.name);
  private readonly model: string | undefined;
  private readonly queries = new LeastRecentlyUsed<Float32Array>(QUERY_VECTORS_KEPT);
  private readonly knowledgebases = new LeastRecentlyUsed<{ version: string; vectors: KnowledgebaseVectors }>(
    KNOWLEDGEBASE_VECTORS_KEPT_BYTES,
    (entry) => entry.vectors.vectors.byteLength + entry.vectors.ids.byteLength,
  );

  /** Knowledgebases already logged as too large, so that the log says it once a process, not once a search. */
  private readonly oversized = new LeastRecentlyUsed<boolean>(QUERY_VECTORS_KEPT);

  constructor(
    config: AppConfig,
    private readonly embeddings: PassageEmbeddingsRepository,
    @Inject(MODEL_PROVIDER) private readonly provider: ModelProvider,
  ) {
    this.model = provider.embeddingsAvailable ? embeddingsModelKey(config.modelProvider) : undefined;
  }

  /**
   * Whether a query is searched by meaning too: not without a model, and not when it asks for exact text (a quoted
   * phrase or an exclusion is a condition on the words, which a vector cannot keep).
   */
  applies(query: string): boolean {
    if (!this.model) return false;
    const parsed = parseSearchQuery(query);
    return parsed.phrases.length === 0 && parsed.excluded.length === 0 && query.trim() !== '';
  }

  /**
   * The lexical hits (best first, `limit` asked of FUSED_DEPTH) fused with the passages nearest in meaning. A
   * provider that fails leaves the lexical answer as it is (logged): a search never fails for want of meaning.
   */
  async fuse(
    ownerId: number,
    knowledgebaseId: number,
    query: string,
    limit: number,
    lexical: PassageHit[],
    meaningWeight = MEANING_WEIGHT,
  ): Promise<PassageHit[]> {
    let near: number[] | undefined;
    try {
      near = await this.nearestPassages(ownerId, knowledgebaseId, query);
    } catch (error) {
      this.logger.warn({ knowledgebaseId, error: errorMessage(error) }, 'search by meaning unavailable');
    }
    if (!near) return lexical.slice(0, limit);
    const scores = new Map<number, number>();
    const add = (id: number, share: number) => scores.set(id, (scores.get(id) ?? 0) + share);
    lexical.forEach((hit, index) => add(hit.id, 1 / (FUSION_K + index + 1)));
    near.forEach((id, index) => add(id, meaningWeight / (FUSION_K + index + 1)));
    const lexicalRank = new Map(lexical.map((hit, index) => [hit.id, index]));
    // Equal scores: the lexical hit first (exact words win a tie), then the nearer in meaning.
    const order = [...scores.keys()].sort(
      (a, b) =>
        scores.get(b)! - scores.get(a)! ||
        (lexicalRank.get(a) ?? Infinity) - (lexicalRank.get(b) ?? Infinity) ||
        near.indexOf(a) - near.indexOf(b),
    );
    const chosen = order.slice(0, limit);
    const found = new Map<number, PassageHit>(lexical.map((hit) => [hit.id, hit]));
    // Found only by meaning, or by words below the highlighted first few: highlighted with their first sentence.
    const missing = chosen.filter((id) => !found.has(id) || found.get(id)!.highlight === null);
    for (const hit of await this.embeddings.hits(ownerId, missing)) found.set(hit.id, hit);
    return chosen.filter((id) => found.has(id)).map((id) => ({ ...found.get(id)!, score: scores.get(id)! }));
  }

  /** The passages nearest the query; undefined for a knowledgebase too large to scan here. */
  private async nearestPassages(
    ownerId: number,
    knowledgebaseId: number,
    query: string,
  ): Promise<number[] | undefined> {
    const model = this.model!;
    // The query's vector first (kept for repeats): its length says how many passages a process can keep.
    const queryVector = await this.queryVector(ownerId, query);
    const vectors = await this.knowledgebaseVectors(ownerId, knowledgebaseId, model, queryVector.length);
    return vectors && nearest(vectors, queryVector, FUSED_DEPTH);
  }

  private async queryVector(ownerId: number, query: string): Promise<Float32Array> {
    const key = query.trim().replace(/\s+/g, ' ');
    const kept = this.queries.get(key);
    if (kept) return kept;
    const answer = await this.provider.embed({
      meter: { userId: ownerId, purpose: 'search_embeddings' },
      inputs: [key],
    });
    const vector = answer.vectors[0];
    let norm = 0;
    for (const value of vector) norm += value * value;
    const unit = vector.map((value) => value / (Math.sqrt(norm) || 1));
    this.queries.set(key, unit);
    return unit;
  }

  private async knowledgebaseVectors(
    ownerId: number,
    knowledgebaseId: number,
    model: string,
    dimensions: number,
  ): Promise<KnowledgebaseVectors | undefined> {
    // A vector and its id: 4 bytes a dimension, 4 for the id.
    const most = Math.floor(KNOWLEDGEBASE_VECTORS_KEPT_BYTES / ((dimensions + 1) * 4));
    const { count, newest } = await this.embeddings.version(ownerId, knowledgebaseId, model, most);
    const version = `${count}:${newest}`;
    const key = `${ownerId}:${knowledgebaseId}`;
    const kept = this.knowledgebases.get(key);
    if (kept && kept.version === version) return kept.vectors;
    if (count > most) {
      if (!this.oversized.get(key)) {
        this.oversized.set(key, true);
        this.logger.warn(
          { knowledgebaseId, passages: count, dimensions, boundBytes: KNOWLEDGEBASE_VECTORS_KEPT_BYTES },
          'a knowledgebase too large for the exact scan is searched by its words only',
        );
      }
      return undefined;
    }
    const vectors = await this.embeddings.vectors(ownerId, knowledgebaseId, model);
    this.knowledgebases.set(key, { version, vectors });
    return vectors;
  }
}
