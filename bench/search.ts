/**
 * Knowledgebase search quality and speed. Not a timed test.
 *
 * Recall: the share of the questions in search-questions.ts whose answer passage is among the top 3, over the
 * project's README and docs and the Apache License 2.0 (split into passages as the worker splits documents),
 * for the search as it was (every word required: `websearch_to_tsquery` with the `simple` configuration, ranked
 * by `ts_rank_cd`) and as it is now, with and without the knowledgebase's language.
 *
 * Latency: the same passages among synthetic ones made of their sentences, N in all (default 10,000), one
 * knowledgebase of another account beside it (as large, at most 100,000), after ANALYZE; p50 and p95 of the search statement per
 * kind of query, with the plan's main nodes. Uses its own throwaway database and drops only it.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/search.ts [passages] [runs per kind]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { PassageSearch, dataSourceOptions } from '@app/database';
import { normaliseWhitespace, splitIntoPassages } from '@app/extraction';
import { createBenchEnvironment } from './support/stack';
import { fixed, nowMs, percentile, printTable, runMain } from './support/report';
import { SEARCH_QUESTIONS } from './search-questions';

const ROOT = join(__dirname, '..');
const SOURCES = [
  join(ROOT, 'README.md'),
  join(ROOT, 'docs', 'operations.md'),
  join(ROOT, 'docs', 'benchmarks.md'),
  join(ROOT, 'node_modules', 'typescript', 'LICENSE.txt'),
];

/** Another account's knowledgebase beside the measured one, so the search must keep to its own. */
const OTHER_PASSAGES = 100_000;

const QUERY_KINDS: [kind: string, query: string][] = [
  ['one rare word', 'litigation'],
  ['common words only', 'the service and the worker of the document'],
  ['question', 'how long does a login session last before it expires'],
  ['misspelt words', 'webhok signatrue'],
  ['phrase', '"exponential backoff"'],
  ['word and exclusion', 'retry -webhook'],
];

/** The search before this change: every word required, ranked by cover density. */
const PLAIN_AND_SQL = `
  SELECT passage.content
    FROM passages passage, websearch_to_tsquery('simple', immutable_unaccent($2)) AS search(query)
   WHERE passage.knowledgebase_id = $1
     AND to_tsvector('simple', immutable_unaccent(passage.content)) @@ search.query
   ORDER BY ts_rank_cd(to_tsvector('simple', immutable_unaccent(passage.content)), search.query) DESC, passage.id
   LIMIT 3`;

const comparable = (text: string) => text.replace(/[`*]/g, '').replace(/\s+/g, ' ').trim();

function corpusPassages(): string[] {
  return SOURCES.flatMap((path) => splitIntoPassages(normaliseWhitespace(readFileSync(path, 'utf8'))));
}

/** Deterministic: the same synthetic passages on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function syntheticPassages(sentences: string[], count: number, seed: number): string[] {
  const next = random(seed);
  const passages: string[] = [];
  for (let index = 0; index < count; index++) {
    let text = '';
    while (text.length < 900) text += `${sentences[Math.floor(next() * sentences.length)]} `;
    passages.push(text.trim());
  }
  return passages;
}

async function loadKnowledgebase(
  dataSource: DataSource,
  languageId: number | null,
  passages: string[],
): Promise<{ userId: number; knowledgebaseId: number }> {
  const [user] = await dataSource.query(
    `INSERT INTO users (name, email, password_hash) VALUES ('Bench', 'bench-' || gen_random_uuid() || '@example.com', 'x')
     RETURNING id`,
  );
  const [knowledgebase] = await dataSource.query(
    `INSERT INTO knowledgebases (user_id, name, language_id) VALUES ($1, 'Bench', $2) RETURNING id`,
    [user.id, languageId],
  );
  const [document] = await dataSource.query(
    `INSERT INTO documents (user_id, knowledgebase_id, name, type, status) VALUES ($1, $2, 'Corpus', 'txt', 'active')
     RETURNING id`,
    [user.id, knowledgebase.id],
  );
  for (let start = 0; start < passages.length; start += 2000) {
    await dataSource.query(
      `INSERT INTO passages (user_id, knowledgebase_id, document_id, position, content)
       SELECT $1, $2, $3, $4 + ordinality - 1, content FROM unnest($5::text[]) WITH ORDINALITY AS item(content)`,
      [user.id, knowledgebase.id, document.id, start, passages.slice(start, start + 2000)],
    );
  }
  return { userId: user.id, knowledgebaseId: knowledgebase.id };
}

async function recall(
  passageSearch: PassageSearch,
  dataSource: DataSource,
  english: number,
  passages: string[],
): Promise<void> {
  const plain = await loadKnowledgebase(dataSource, null, passages);
  const inEnglish = await loadKnowledgebase(dataSource, english, passages);
  await dataSource.query('ANALYZE');
  const hits = { before: 0, plain: 0, english: 0 };
  const misses: string[] = [];
  const found = (contents: string[], answer: string) =>
    contents.some((content) => comparable(content).includes(comparable(answer)));
  for (const { question, answer } of SEARCH_QUESTIONS) {
    if (!passages.some((passage) => comparable(passage).includes(comparable(answer)))) {
      throw new Error(`No passage holds the answer to "${question}"`);
    }
    const before: { content: string }[] = await dataSource.query(PLAIN_AND_SQL, [plain.knowledgebaseId, question]);
    if (
      found(
        before.map((row) => row.content),
        answer,
      )
    )
      hits.before++;
    const after = await passageSearch.search(plain.userId, plain.knowledgebaseId, question, 3);
    if (
      found(
        after.map((row) => row.content),
        answer,
      )
    )
      hits.plain++;
    const english = await passageSearch.search(inEnglish.userId, inEnglish.knowledgebaseId, question, 3);
    if (
      found(
        english.map((row) => row.content),
        answer,
      )
    )
      hits.english++;
    else misses.push(question);
  }
  const share = (count: number) =>
    `${count}/${SEARCH_QUESTIONS.length} (${fixed((100 * count) / SEARCH_QUESTIONS.length, 0)}%)`;
  printTable(
    `Recall: answer passage in the top 3, ${SEARCH_QUESTIONS.length} questions over ${passages.length} passages`,
    ['search', 'top 3'],
    [
      ['before: every word required (simple)', share(hits.before)],
      ['now, no language', share(hits.plain)],
      ['now, English', share(hits.english)],
    ],
    misses.map((question) => `missed in English: ${question}`),
  );
}

/** The plan's scans of passages and of the vocabulary that ran, to show which index each kind of query uses. */
async function planSummary(dataSource: DataSource, sql: string, parameters: unknown[]): Promise<string> {
  const rows: { 'QUERY PLAN': string }[] = await dataSource.query(`EXPLAIN (ANALYZE, COSTS OFF) ${sql}`, parameters);
  const nodes = rows
    .map((row) => row['QUERY PLAN'])
    .filter((line) => /(Index Scan|Seq Scan)( using \S+)? on (passages|knowledgebase_lexemes)/.test(line))
    .filter((line) => !line.includes('never executed') && !line.includes('_pkey'))
    .map((line) => line.replace(/^[\s->]+/, '').replace(/\s*\(actual.*$/, ''));
  return [...new Set(nodes)].join('; ');
}

async function latency(
  passageSearch: PassageSearch,
  dataSource: DataSource,
  english: number,
  corpus: string[],
  total: number,
  runs: number,
): Promise<void> {
  const sentences = corpus.flatMap((passage) => passage.split(/(?<=[.;:])\s+/)).filter((text) => text.length > 20);
  const started = nowMs();
  const measured = await loadKnowledgebase(dataSource, english, [
    ...corpus,
    ...syntheticPassages(sentences, total - corpus.length, 1),
  ]);
  await loadKnowledgebase(dataSource, english, syntheticPassages(sentences, Math.min(total, OTHER_PASSAGES), 2));
  await dataSource.query('ANALYZE');
  const loadSeconds = (nowMs() - started) / 1000;

  const timings = new Map<string, number[]>(QUERY_KINDS.map(([kind]) => [kind, []]));
  for (let run = 0; run < runs + 5; run++) {
    for (const [kind, query] of QUERY_KINDS) {
      const start = nowMs();
      await passageSearch.search(measured.userId, measured.knowledgebaseId, query, 5);
      if (run >= 5) timings.get(kind)!.push(nowMs() - start);
    }
  }
  const rows: (string | number)[][] = [];
  for (const [kind, query] of QUERY_KINDS) {
    const values = timings.get(kind)!;
    const [sql, parameters] = passageSearch.statement(measured.userId, measured.knowledgebaseId, query, 5);
    rows.push([
      kind,
      query,
      fixed(percentile(values, 50)),
      fixed(percentile(values, 95)),
      await planSummary(dataSource, sql, parameters),
    ]);
  }
  printTable(
    `Latency over ${total.toLocaleString('en')} passages in one knowledgebase (another beside it), ${runs} runs a kind`,
    ['kind', 'query', 'p50 ms', 'p95 ms', 'plan (index and scan nodes)'],
    rows,
    [`loaded and analysed in ${fixed(loadSeconds)} s; the statement alone, over one pooled connection`],
  );
}

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 10_000);
  const runs = Number(process.argv[3] ?? 200);
  const environment = await createBenchEnvironment();
  const dataSource = new DataSource(dataSourceOptions(environment.databaseUrl, 2));
  try {
    await dataSource.initialize();
    const passageSearch = new PassageSearch(dataSource);
    const [{ id: english }] = await dataSource.query(`SELECT id FROM languages WHERE iso_2 = 'en'`);
    const corpus = corpusPassages();
    await recall(passageSearch, dataSource, english, corpus);
    await latency(passageSearch, dataSource, english, corpus, total, runs);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await environment.clean();
  }
}

runMain(main);
