/**
 * Knowledgebase search quality and speed. Not a timed test.
 *
 * Recall: the share of the questions in search-questions.ts whose answer passage is among the top 3, over the
 * project's README and docs, the Apache License 2.0 and the documents in search-corpus (plain texts, two of them
 * rendered to PDFs, one with a running header and footer, and a web page), split into passages as the worker splits
 * documents,
 * for the search as it was (every word required: `websearch_to_tsquery` with the `simple` configuration, ranked
 * by `ts_rank_cd`) and as it is now, with and without the knowledgebase's language.
 *
 * Latency, in one database: a small knowledgebase (10,000 passages) of one account beside a large one (1,000,000
 * by default, or as many as given) of another, both made of the corpus' passages and of synthetic ones built from
 * its sentences on the server, with a rare word planted in 20 passages of each; after ANALYZE, p50 and p95 of the
 * search statement per kind of query and knowledgebase, with the plan's index and scan nodes and the buffers it
 * touched.
 *
 * `--before <commit>`: the passages are loaded under that commit's migrations, a file-level copy of that database
 * gets today's (as an existing deployment would), and that commit's statement on the first is measured against
 * today's on the copy, interleaved round by round (each round in the other order); a commit with today's migrations
 * is measured on the same database. Uses its own throwaway databases and drops only them. `--pgbouncer`: today's
 * statement is also measured through Debian's PgBouncer in transaction mode (one server connection), started on a
 * free loopback port, each phase against the first. `--meaning`: today's search with meaning too (every passage given
 * a vector, the stand-in of the provider answering at once), each kind's p50/p95 beside the lexical search's.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/search.ts \
 *     [large passages] [runs per kind] [--before <commit>] [--pgbouncer] [--meaning] [--latency-only] [--lost <commit>] [--keep]
 *
 * `--lost <commit>`: the previous release against today, question by question: the corpus cut by that commit's cutter
 * and searched by its statement (on a database of its schema), against today's cutter and statement; top 1 / top 3 /
 * MRR of both on every set of questions, and each question the first answered in the top 3 and today does not (and the
 * reverse). Recall only, in English; with `--meaning`, today's search with meaning too, as `recall` runs it.
 *
 * `--keep` leaves the run's database in place (its name is printed) for EXPLAIN by hand; drop it when done. Its
 * private Redis is stopped either way.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import type { AppConfig } from '@app/config';
import { PassageEmbeddingsRepository, PassageSearch, dataSourceOptions, vectorToBytes } from '@app/database';
import { OpenAiModelProvider } from '@app/model-provider';
import type { JobQueue } from '@app/jobs';
import { FUSED_DEPTH, MEANING_WEIGHT, MeaningSearch } from '../apps/api/src/knowledgebases/meaning-search';
import { PassageEmbedding } from '../apps/worker/src/documents/passage-embedding.service';
import { FakeOpenAi } from '../test/support/openai.fake';
import { runModel } from './search-sentence-model';
import { dropDatabase, ensureDatabase, runMigrations } from '../libs/database/src/data-source-options';
import { migrations } from '../libs/database/src/migrations';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { extractCleanPdfPages, normaliseWhitespace, splitIntoPassages } from '@app/extraction';
import { htmlToMainText } from '../libs/outbound-http/src/html-text';
import { pgbouncerBinary, startPgbouncer } from '../test/support/pgbouncer';
import { createBenchEnvironment } from './support/stack';
import { fixed, nowMs, onInterrupt, percentile, printTable, runMain } from './support/report';
import { PARAPHRASED_QUESTIONS, SEARCH_QUESTIONS, type SearchQuestion } from './search-questions';

const ROOT = join(__dirname, '..');
/** The project's own pages: the README and the pages it links to. */
const PROJECT_PAGES = [
  'README.md',
  'docs/contributing.md',
  'docs/configuration.md',
  'docs/operations.md',
  'docs/api/input-handling.md',
  'docs/api/knowledgebases.md',
  'docs/api/tools.md',
  'docs/api/phone-numbers.md',
  'docs/api/assistants.md',
  'docs/api/campaigns.md',
  'docs/api/dialling.md',
  'docs/api/calls.md',
  'docs/api/voice-runtime.md',
  'docs/api/rate-limits.md',
  'docs/api/idempotency.md',
  'docs/api/authentication.md',
  'docs/testing.md',
  'docs/fault-runs.md',
  'docs/benchmarks.md',
];
const SOURCES = [
  ...PROJECT_PAGES.map((page) => join(ROOT, page)),
  join(ROOT, 'node_modules', 'typescript', 'LICENSE.txt'),
  join(__dirname, 'search-corpus', 'shop-faq.txt'),
  join(__dirname, 'search-corpus', 'returns-policy.txt'),
  join(__dirname, 'search-corpus', 'price-list.txt'),
  join(__dirname, 'search-corpus', 'dishwasher-manual.txt'),
  join(ROOT, 'node_modules', 'pg', 'LICENSE'),
  join(__dirname, 'search-corpus', 'mpl-2.0.txt'),
];
/** Read as the worker reads an uploaded PDF: rendered to a PDF of many pages first, then extracted with PDFium. */
const PDF_SOURCE = join(__dirname, 'search-corpus', 'tenant-handbook.txt');
/** The same, each page with a running header and a numbered footer, which the extraction drops. */
const PDF_WITH_FURNITURE = join(__dirname, 'search-corpus', 'gpl-2.0.txt');
/** Read as the crawler reads a page: its main text, without navigation, banner and footer. */
const WEB_PAGE = join(__dirname, 'search-corpus', 'bike-workshop.html');

/** The search before this change: every word required, ranked by cover density. */
const PLAIN_AND_SQL = `
  SELECT passage.content
    FROM passages passage, websearch_to_tsquery('simple', immutable_unaccent($2)) AS search(query)
   WHERE passage.knowledgebase_id = $1
     AND to_tsvector('simple', immutable_unaccent(passage.content)) @@ search.query
   ORDER BY ts_rank_cd(to_tsvector('simple', immutable_unaccent(passage.content)), search.query) DESC, passage.id
   LIMIT 3`;

export const comparable = (text: string) => text.replace(/[`*]/g, '').replace(/\s+/g, ' ').trim();

/** A Letter-sized PDF of `text`, its paragraphs wrapped at word boundaries, with `furniture` on every page. */
async function pdfOf(text: string, furniture?: { header: string; footer: string }): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const lines = text.split('\n').flatMap((paragraph) => {
    const wrapped: string[] = [''];
    for (const word of paragraph.split(' ')) {
      const last = wrapped.length - 1;
      if (wrapped[last] && wrapped[last].length + 1 + word.length > 90) wrapped.push(word);
      else wrapped[last] = wrapped[last] ? `${wrapped[last]} ${word}` : word;
    }
    return wrapped;
  });
  for (let start = 0; start < lines.length; start += 60) {
    const page = pdf.addPage([612, 792]);
    page.drawText(lines.slice(start, start + 60).join('\n'), { x: 40, y: 740, size: 10, lineHeight: 12, font });
    if (furniture) {
      const number = String(start / 60 + 1);
      page.drawText(furniture.header, { x: 40, y: 765, size: 9, font });
      page.drawText(`${furniture.footer} - page ${number}`, { x: 40, y: 20, size: 9, font });
    }
  }
  return Buffer.from(await pdf.save());
}

/** The benchmarks' own section on search quotes its questions: a question must not find itself. */
function withoutThisBenchmark(text: string): string {
  return text.replace(/^## \d+\. Knowledgebase search\b[\s\S]*?(?=^## )/m, '');
}

export async function corpusPassages(split: (text: string) => string[] = splitIntoPassages): Promise<string[]> {
  const pdfPassages = async (pdf: Buffer) => {
    const pages = await extractCleanPdfPages(pdf, { engine: 'pdfium' });
    return split(pages.filter((page) => page !== '').join('\n\n'));
  };
  const furniture = { header: 'GNU General Public License, version 2 - Free Software Foundation', footer: 'gpl-2.0' };
  return [
    ...SOURCES.flatMap((path) => split(normaliseWhitespace(withoutThisBenchmark(readFileSync(path, 'utf8'))))),
    ...(await pdfPassages(await pdfOf(readFileSync(PDF_SOURCE, 'utf8')))),
    ...(await pdfPassages(await pdfOf(readFileSync(PDF_WITH_FURNITURE, 'utf8'), furniture))),
    ...split(normaliseWhitespace(htmlToMainText(readFileSync(WEB_PAGE, 'utf8')).text)),
  ];
}

/** A knowledgebase of a new account, holding `passages` in one document. */
export async function loadKnowledgebase(
  dataSource: DataSource,
  languageId: number | null,
  passages: string[],
  name = 'Bench',
): Promise<{ userId: number; knowledgebaseId: number; documentId: number }> {
  const [user] = await dataSource.query(
    `INSERT INTO users (name, email, password_hash) VALUES ('Bench', 'bench-' || gen_random_uuid() || '@example.com', 'x')
     RETURNING id`,
  );
  const [knowledgebase] = await dataSource.query(
    `INSERT INTO knowledgebases (user_id, name, language_id) VALUES ($1, $2, $3) RETURNING id`,
    [user.id, name, languageId],
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
  return { userId: user.id, knowledgebaseId: knowledgebase.id, documentId: document.id };
}

interface RecallFigures {
  top1: number;
  top3: number;
  reciprocalRanks: number;
  questions: number;
  missed: string[];
}

/** Top-1, top-3 and mean reciprocal rank (over the first 10 results) of one search on one set of questions. */
export async function recallOf(
  questions: SearchQuestion[],
  passages: string[],
  search: (question: string) => Promise<string[]>,
): Promise<RecallFigures> {
  const figures: RecallFigures = { top1: 0, top3: 0, reciprocalRanks: 0, questions: questions.length, missed: [] };
  for (const { question, answer } of questions) {
    const contents = await search(question);
    const rank = contents.findIndex((content) => comparable(content).includes(comparable(answer))) + 1;
    if (rank === 1) figures.top1++;
    if (rank >= 1 && rank <= 3) figures.top3++;
    else figures.missed.push(question);
    if (rank >= 1) figures.reciprocalRanks += 1 / rank;
  }
  return figures;
}

/** How many of the questions share no stemmed word (stop words aside) with their answer's text. */
async function sharingNoWord(dataSource: DataSource, questions: SearchQuestion[]): Promise<number> {
  const [{ count }] = await dataSource.query(
    `SELECT count(*)::int AS count FROM unnest($1::text[], $2::text[]) AS item(question, answer)
      WHERE NOT to_tsvector('kb_english', question) @@
                coalesce(nullif(array_to_string(tsvector_to_array(to_tsvector('kb_english', answer)), ' | '), ''), 'x')::tsquery`,
    [questions.map(({ question }) => question), questions.map(({ answer }) => answer.replace(/[|&!():'*<>\\]/g, ' '))],
  );
  return count;
}

/**
 * With --before, that commit's statement runs on a database of that commit's schema and reference data (its related
 * words), loaded with the same passages, unless the commit has today's migrations.
 */
async function recall(
  environment: { databaseUrl: string },
  english: number,
  passages: string[],
  before: string | undefined,
): Promise<void> {
  const cleanups: (() => Promise<void>)[] = [];
  let beforeUrl = environment.databaseUrl;
  if (before && migrationsAt(before).length !== migrations.length) {
    beforeUrl = await sideDatabase(environment, 'recall_before', cleanups);
    await migrateTo(beforeUrl, before);
  }
  const dataSource = await connect(environment.databaseUrl);
  const beforeSource = before ? await connect(beforeUrl) : undefined;
  try {
    const plain = await loadKnowledgebase(dataSource, null, passages);
    const inEnglish = await loadKnowledgebase(dataSource, english, passages);
    await dataSource.query('ANALYZE');
    const beforeEnglish =
      beforeSource && beforeUrl !== environment.databaseUrl
        ? await loadKnowledgebase(beforeSource, english, passages)
        : inEnglish;
    if (beforeSource && beforeUrl !== environment.databaseUrl) await beforeSource.query('ANALYZE');
    const contents = (rows: { content: string }[]) => rows.map((row) => row.content);
    const searches: [string, (question: string) => Promise<string[]>][] = [
      [
        'every word required (`websearch_to_tsquery`, simple)',
        async (question) => contents(await dataSource.query(PLAIN_AND_SQL, [plain.knowledgebaseId, question])),
      ],
    ];
    if (beforeSource) {
      const old = searchAt(before!, beforeSource);
      searches.push([
        `${before}, English`,
        async (question) =>
          contents((await old.search(beforeEnglish.userId, beforeEnglish.knowledgebaseId, question, 10)) as never),
      ]);
    }
    const now = new PassageSearch(dataSource);
    const meaning = await withMeaning(dataSource, inEnglish.documentId, passages, cleanups);
    searches.push(
      [
        'now, no language',
        async (question) => contents(await now.search(plain.userId, plain.knowledgebaseId, question, 10)),
      ],
      [
        'now, English',
        async (question) => contents(await now.search(inEnglish.userId, inEnglish.knowledgebaseId, question, 10)),
      ],
      // The weight the service uses, and others beside it (chosen on the tuning part and the project's questions).
      ...[MEANING_WEIGHT, 1, 0.5, 0.25]
        .filter((weight, index, weights) => weights.indexOf(weight) === index)
        .map((weight): [string, (question: string) => Promise<string[]>] => [
          `now, English, with meaning${weight === MEANING_WEIGHT ? '' : ` weighing ${weight}`}`,
          async (question) => {
            const lexical = await now.search(
              inEnglish.userId,
              inEnglish.knowledgebaseId,
              question,
              FUSED_DEPTH,
              undefined,
              10,
            );
            const { userId, knowledgebaseId } = inEnglish;
            return contents(await meaning.fuse(userId, knowledgebaseId, question, 10, lexical, weight));
          },
        ]),
    );
    const { sets, stale } = questionSets(passages);
    const rows: (string | number)[][] = [];
    const notes: string[] = [];
    for (const [set, questions] of sets) {
      let beforeMissed: Set<string> | undefined;
      const unshared = await sharingNoWord(dataSource, questions);
      for (const [name, search] of searches) {
        const figures = await recallOf(questions, passages, search);
        const share = (count: number) =>
          `${count}/${figures.questions} (${fixed((100 * count) / figures.questions, 0)}%)`;
        rows.push([
          `${set} (${questions.length}, ${unshared} sharing no word)`,
          name,
          share(figures.top1),
          share(figures.top3),
          fixed(figures.reciprocalRanks / figures.questions, 2),
        ]);
        if (name === 'now, English') {
          notes.push(...figures.missed.map((question) => `missed (${set}): ${question}`));
          // What changed against the earlier commit's statement, question by question.
          if (beforeMissed) {
            const now = new Set(figures.missed);
            notes.push(...figures.missed.filter((question) => !beforeMissed!.has(question)).map((q) => `  lost: ${q}`));
            notes.push(...[...beforeMissed].filter((question) => !now.has(question)).map((q) => `  gained: ${q}`));
          }
        }
        if (name.startsWith(`${before},`)) beforeMissed = new Set(figures.missed);
      }
    }
    notes.push(...stale.map((question) => `left out, its answer is no longer in the documents: ${question.question}`));
    printTable(
      `Recall over ${passages.length} passages: answer passage among the results`,
      ['questions', 'search', 'top 1', 'top 3', 'MRR'],
      rows,
      notes,
    );
  } finally {
    await dataSource.destroy();
    await beforeSource?.destroy();
    for (const cleanup of cleanups) await cleanup();
  }
}

/**
 * The sets of questions recall is measured on. The project's documents change under their questions: a question
 * whose answer is in none of `passages` is left out (`stale`), by name; a paraphrased one must always be answered.
 */
function questionSets(...corpora: string[][]): { sets: [string, SearchQuestion[]][]; stale: SearchQuestion[] } {
  const answered = (question: SearchQuestion) =>
    corpora.every((passages) => passages.some((passage) => comparable(passage).includes(comparable(question.answer))));
  if (PARAPHRASED_QUESTIONS.some((question) => !answered(question))) {
    throw new Error('A paraphrased question has no answer in the corpus');
  }
  return {
    stale: SEARCH_QUESTIONS.filter((question) => !answered(question)),
    sets: [
      ['project questions', SEARCH_QUESTIONS.filter(answered)],
      ['paraphrased, tuning part', PARAPHRASED_QUESTIONS.filter((question) => !question.heldOut)],
      ['paraphrased, held out', PARAPHRASED_QUESTIONS.filter((question) => question.heldOut)],
      [
        'of those, new documents, tuning part',
        PARAPHRASED_QUESTIONS.filter((question) => question.newDocument && !question.heldOut),
      ],
      [
        'of those, new documents, held out',
        PARAPHRASED_QUESTIONS.filter((question) => question.newDocument && question.heldOut),
      ],
    ],
  };
}

/** The rank (1-10) of the first result holding the answer, 0 for none. */
async function rankOf(question: SearchQuestion, search: (question: string) => Promise<string[]>): Promise<number> {
  const contents = await search(question.question);
  return contents.findIndex((content) => comparable(content).includes(comparable(question.answer))) + 1;
}

/**
 * --lost: the previous release (`commit`'s cutter over the same texts, its statement on a database of its schema)
 * against today's cutter and statement, question by question, in English; with --meaning, today's search with
 * meaning too (the sentence encoder's vectors through the stand-in, as `recall` runs it).
 */
async function lostQuestions(
  environment: { databaseUrl: string },
  english: number,
  commit: string,
  alsoWithMeaning: boolean,
): Promise<void> {
  const cleanups: (() => Promise<void>)[] = [];
  const beforePassages = await corpusPassages(cutterAt(commit));
  const nowPassages = await corpusPassages();
  let beforeUrl = environment.databaseUrl;
  if (migrationsAt(commit).length !== migrations.length) {
    beforeUrl = await sideDatabase(environment, 'lost_before', cleanups);
    await migrateTo(beforeUrl, commit);
  }
  const dataSource = await connect(environment.databaseUrl);
  const beforeSource = await connect(beforeUrl);
  try {
    const now = await loadKnowledgebase(dataSource, english, nowPassages);
    const before = await loadKnowledgebase(beforeSource, english, beforePassages);
    await dataSource.query('ANALYZE');
    if (beforeUrl !== environment.databaseUrl) await beforeSource.query('ANALYZE');
    const old = searchAt(commit, beforeSource);
    const today = new PassageSearch(dataSource);
    const contents = (rows: { content: string }[]) => rows.map((row) => row.content);
    const searchBefore = async (question: string) =>
      contents((await old.search(before.userId, before.knowledgebaseId, question, 10)) as never);
    const searchNow = async (question: string) =>
      contents(await today.search(now.userId, now.knowledgebaseId, question, 10));
    const meaning = alsoWithMeaning ? await withMeaning(dataSource, now.documentId, nowPassages, cleanups) : undefined;
    const searchWithMeaning = async (question: string) => {
      const lexical = await today.search(now.userId, now.knowledgebaseId, question, FUSED_DEPTH, undefined, 10);
      return contents(await meaning!.fuse(now.userId, now.knowledgebaseId, question, 10, lexical, MEANING_WEIGHT));
    };
    const sides = meaning ? (['before', 'now', 'meaning'] as const) : (['before', 'now'] as const);
    const { sets, stale } = questionSets(beforePassages, nowPassages);
    const rows: (string | number)[][] = [];
    const notes: string[] = [];
    const lostCount = { now: 0, meaning: 0 };
    for (const [set, questions] of sets) {
      const figures = { before: [0, 0, 0], now: [0, 0, 0], meaning: [0, 0, 0] };
      for (const question of questions) {
        const ranks = {
          before: await rankOf(question, searchBefore),
          now: await rankOf(question, searchNow),
          meaning: meaning ? await rankOf(question, searchWithMeaning) : 0,
        };
        for (const side of sides) {
          const rank = ranks[side];
          if (rank === 1) figures[side][0]++;
          if (rank >= 1 && rank <= 3) figures[side][1]++;
          if (rank >= 1) figures[side][2] += 1 / rank;
        }
        const inTop3 = (rank: number) => rank >= 1 && rank <= 3;
        const shown = (rank: number) => (rank === 0 ? 'past 10th' : `${rank}.`);
        // The subsets (new documents) repeat questions of the two parts: each is listed once.
        if (set.startsWith('of those')) continue;
        for (const side of sides.slice(1) as ('now' | 'meaning')[]) {
          const move = `${question.question} (${shown(ranks.before)} -> ${shown(ranks[side])})`;
          const how = side === 'now' ? set : `${set}, with meaning`;
          if (inTop3(ranks.before) && !inTop3(ranks[side])) {
            lostCount[side]++;
            notes.push(`lost (${how}): ${move}`);
          }
          if (!inTop3(ranks.before) && inTop3(ranks[side])) notes.push(`gained (${how}): ${move}`);
        }
      }
      const shown = ([top1, top3, reciprocal]: number[]) =>
        `${top1} / ${top3} (${fixed((100 * top3) / questions.length, 0)}%) / ${fixed(reciprocal / questions.length, 2)}`;
      rows.push([`${set} (${questions.length})`, ...sides.map((side) => shown(figures[side]))]);
    }
    notes.unshift(
      `${lostCount.now} question(s) in the top 3 before and not now` +
        (meaning ? `; ${lostCount.meaning} not now with meaning` : ''),
    );
    notes.push(...stale.map((question) => `left out, its answer is not in both corpora: ${question.question}`));
    printTable(
      `Questions lost: ${commit}'s cutter and statement (${beforePassages.length} passages) against today's ` +
        `(${nowPassages.length}), English, top 1 / top 3 / MRR`,
      ['questions', `before (${commit})`, 'now', ...(meaning ? ['now, with meaning'] : [])],
      rows,
      notes,
    );
  } finally {
    await dataSource.destroy();
    await beforeSource.destroy();
    for (const cleanup of cleanups) await cleanup();
  }
}

/** The passage cutter of `commit`, from its sources. */
function cutterAt(commit: string): (text: string) => string[] {
  const directory = join(__dirname, '.cache', `cutter-${commit}`);
  mkdirSync(directory, { recursive: true });
  const source = execFileSync('git', ['show', `${commit}:libs/extraction/src/passage.splitter.ts`], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  writeFileSync(join(directory, 'passage.splitter.ts'), source);
  const { splitIntoPassages: split } = require(join(directory, 'passage.splitter.ts')) as {
    splitIntoPassages: (text: string) => string[];
  };
  return (text) => split(text);
}

/**
 * Search by meaning as the service runs it, with real vectors: the packaged sentence encoder (bench/search-sentence-
 * model.ts, 512 dimensions) embeds the corpus and every question once, and the stand-in of OpenAI serves those
 * vectors through the embeddings API, so the worker's embedding job and the API's fusion run unchanged against it.
 */
async function withMeaning(
  dataSource: DataSource,
  documentId: number,
  passages: string[],
  cleanups: (() => Promise<void>)[],
): Promise<MeaningSearch> {
  const questions = [...SEARCH_QUESTIONS, ...PARAPHRASED_QUESTIONS].map(({ question }) => question);
  const started = nowMs();
  const model = runModel(passages, [], questions);
  console.log(
    `sentence encoder: ${passages.length} passages and ${questions.length} questions in ${fixed((nowMs() - started) / 1000, 1)} s`,
  );
  const vectors = new Map<string, number[]>();
  passages.forEach((passage, index) => vectors.set(passage, model.passageVectors[index]));
  questions.forEach((question, index) => vectors.set(question, model.questionVectors[index]));
  const fake = await FakeOpenAi.start();
  cleanups.push(() => fake.close());
  fake.vectorFor = (text) => {
    const vector = vectors.get(text);
    if (!vector) throw new Error(`no vector for ${text.slice(0, 40)}`);
    return vector;
  };
  const settings = {
    baseUrl: fake.baseUrl,
    apiKey: fake.apiKey,
    model: 'gpt-4o-mini',
    timeoutSeconds: 30,
    maxRetries: 2,
    concurrency: 4,
    embeddingsModel: 'text-embedding-3-small',
    embeddingsDimensions: 512,
  };
  const config = { modelProvider: settings } as AppConfig;
  const provider = new OpenAiModelProvider(settings, { record: () => Promise.resolve() });
  const repository = new PassageEmbeddingsRepository(dataSource, undefined as never);
  const worker = new PassageEmbedding(config, repository, {} as JobQueue, provider);
  const job = { attemptsMade: 0, opts: { attempts: 1 } } as never;
  await worker.embed({ documentId }, job);
  return new MeaningSearch(config, repository, provider);
}

/** The plan's scans of passages and of the vocabulary that ran, and the buffers the whole statement touched. */
async function planSummary(dataSource: DataSource, sql: string, parameters: unknown[]): Promise<[string, number]> {
  const rows: { 'QUERY PLAN': string }[] = await dataSource.query(
    `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${sql}`,
    parameters,
  );
  const lines = rows.map((row) => row['QUERY PLAN']);
  const nodes = lines
    .filter((line) => /(Index Scan|Seq Scan)( using \S+)? on (passages|knowledgebase_lexemes)/.test(line))
    .filter((line) => !line.includes('never executed') && !line.includes('_pkey'))
    .map((line) => line.replace(/^[\s->]+/, '').replace(/\s*\(actual.*$/, ''));
  // The first Buffers line is the root node's: everything the statement read or found in shared buffers.
  const buffers = /hit=(\d+)(?: read=(\d+))?/.exec(lines.find((line) => line.includes('Buffers:')) ?? '');
  return [[...new Set(nodes)].join('; '), buffers ? Number(buffers[1]) + Number(buffers[2] ?? 0) : 0];
}

interface Loaded {
  label: string;
  userId: number;
  knowledgebaseId: number;
}

/**
 * A knowledgebase of `total` passages: the corpus', then synthetic ones of nine random sentences each, built on
 * the server in batches (deterministic: seeded), with RARE_WORD in RARE_PASSAGES of them spread over the whole.
 */
async function generateKnowledgebase(
  dataSource: DataSource,
  label: string,
  english: number,
  corpus: string[],
  sentences: string[],
  total: number,
): Promise<Loaded> {
  const { userId, knowledgebaseId, documentId } = await loadKnowledgebase(dataSource, english, corpus, label);
  const runner = dataSource.createQueryRunner();
  try {
    await runner.query(`SELECT setseed(0.42)`);
    // The subquery names the outer row so that it draws its sentences anew for every passage.
    for (let start = corpus.length; start < total; start += 50_000) {
      await runner.query(
        `INSERT INTO passages (user_id, knowledgebase_id, document_id, position, content)
         SELECT $1, $2, $3, position,
                (SELECT string_agg(($6::text[])[1 + floor(random() * cardinality($6::text[]))::int], ' ')
                   FROM generate_series(1, 9 + position * 0))
                || CASE WHEN position % ($7::int / $8::int) = 0 THEN ' Disputes over a ' || $9 || ' go to arbitration.'
                        ELSE '' END
           FROM generate_series($4::int, $5::int - 1) position`,
        [
          userId,
          knowledgebaseId,
          documentId,
          start,
          Math.min(total, start + 50_000),
          sentences,
          total,
          RARE_PASSAGES,
          RARE_WORD,
        ],
      );
    }
  } finally {
    await runner.release();
  }
  return { label, userId, knowledgebaseId };
}

/** A word no document of the corpus uses, planted in RARE_PASSAGES passages of each knowledgebase. */
const RARE_WORD = 'quokka';
const RARE_PASSAGES = 20;
const SMALL_PASSAGES = 10_000;

const QUERY_KINDS: [kind: string, query: string][] = [
  ['one rare word (20 passages)', RARE_WORD],
  ['rare and common word', `${RARE_WORD} document`],
  ['common words only', 'the service and the worker of the document'],
  ['question', 'how long does a login session last before it expires'],
  ['question of common words', 'how do I configure the timeout for a request'],
  ['misspelt words', 'webhok signatrue'],
  ['phrase', '"exponential backoff"'],
  ['word and exclusion', 'retry -webhook'],
];

interface SearchStatement {
  search(ownerId: number, knowledgebaseId: number, query: string, limit: number): Promise<unknown[]>;
  statement(ownerId: number, knowledgebaseId: number, query: string, limit: number): [string, unknown[]];
}

/** One statement over one database: what a phase of the measurement searches with. */
interface Phase {
  name: string;
  search: SearchStatement;
  dataSource: DataSource;
}

/**
 * p50 and p95 of every kind on every knowledgebase in every phase, interleaved round by round (so a phase is not
 * favoured by the machine's load at its time), then one table per phase.
 */
async function measure(title: string, phases: Phase[], knowledgebases: Loaded[], runs: number): Promise<void> {
  const key = (phase: Phase, loaded: Loaded, kind: string) => `${phase.name}|${loaded.label}|${kind}`;
  const timings = new Map<string, number[]>();
  for (let run = 0; run < runs + 5; run++) {
    for (const loaded of knowledgebases) {
      for (const [kind, query] of QUERY_KINDS) {
        // Every other round the other phase goes first, so neither always runs on what the other warmed.
        for (const phase of run % 2 === 0 ? phases : [...phases].reverse()) {
          const start = nowMs();
          await phase.search.search(loaded.userId, loaded.knowledgebaseId, query, 5);
          const elapsed = nowMs() - start;
          if (run < 5) continue;
          const values = timings.get(key(phase, loaded, kind)) ?? [];
          values.push(elapsed);
          timings.set(key(phase, loaded, kind), values);
        }
      }
    }
  }
  // Each phase after the first against the first.
  for (const other of phases.slice(1)) {
    const rows = knowledgebases.flatMap((loaded) =>
      QUERY_KINDS.map(([kind]) => {
        const [before, now] = [phases[0], other].map((phase) => timings.get(key(phase, loaded, kind))!);
        return [
          loaded.label,
          kind,
          fixed(percentile(before, 95)),
          fixed(percentile(now, 95)),
          fixed(percentile(now, 50) / percentile(before, 50), 2),
          fixed(percentile(now, 95) / percentile(before, 95), 2),
        ];
      }),
    );
    printTable(
      `${title}: ${other.name} against ${phases[0].name}`,
      ['knowledgebase', 'kind', 'before p95 ms', 'now p95 ms', 'p50 ratio', 'p95 ratio'],
      rows,
    );
  }
  for (const phase of phases) {
    const rows: (string | number)[][] = [];
    let worst = 0;
    for (const loaded of knowledgebases) {
      for (const [kind, query] of QUERY_KINDS) {
        const values = timings.get(key(phase, loaded, kind))!;
        const [sql, parameters] = phase.search.statement(loaded.userId, loaded.knowledgebaseId, query, 5);
        const [plan, buffers] = await planSummary(phase.dataSource, sql, parameters);
        worst = Math.max(worst, percentile(values, 95));
        rows.push([
          loaded.label,
          kind,
          query,
          fixed(percentile(values, 50)),
          fixed(percentile(values, 95)),
          buffers,
          plan,
        ]);
      }
    }
    printTable(
      `${title}, ${phase.name}`,
      ['knowledgebase', 'kind', 'query', 'p50 ms', 'p95 ms', 'buffers', 'plan (index and scan nodes)'],
      rows,
      [
        `${runs} runs a kind, every phase in each round; the statement alone, over one pooled connection; ` +
          `buffers: shared hit + read of one run. Worst p95: ${fixed(worst)} ms`,
      ],
    );
  }
}

/**
 * Today's search with meaning, as the API runs it: the lexical statement for FUSED_DEPTH, the query's vector (from
 * the stand-in, answering at once, and kept after the first run as the API keeps it), an exact scan of the
 * knowledgebase's vectors (kept in this process while unchanged) and the fusion. Every passage gets one of 1,000
 * random unit vectors of 512 dimensions: the time does not depend on their values.
 */
async function meaningPhase(url: string, opened: DataSource[], cleanups: (() => Promise<void>)[]): Promise<Phase> {
  const dataSource = await connect(url);
  opened.push(dataSource);
  const dimensions = 512;
  const pool = Array.from({ length: 1000 }, () => {
    const vector = Float32Array.from({ length: dimensions }, () => Math.random() - 0.5);
    const norm = Math.hypot(...vector);
    return vectorToBytes(vector.map((value) => value / norm));
  });
  const started = nowMs();
  await dataSource.query(
    `INSERT INTO passage_embeddings (passage_id, user_id, knowledgebase_id, model, embedding)
     SELECT id, user_id, knowledgebase_id, 'text-embedding-3-small/512', ($1::bytea[])[1 + id % 1000] FROM passages`,
    [pool],
  );
  await dataSource.query('VACUUM ANALYZE passage_embeddings');
  console.log(`wrote a vector of ${dimensions} dimensions to every passage in ${fixed((nowMs() - started) / 1000)} s`);
  const fake = await FakeOpenAi.start();
  cleanups.push(() => fake.close());
  const settings = {
    baseUrl: fake.baseUrl,
    apiKey: fake.apiKey,
    model: 'gpt-4o-mini',
    timeoutSeconds: 30,
    maxRetries: 0,
    concurrency: 4,
    embeddingsModel: 'text-embedding-3-small',
    embeddingsDimensions: dimensions,
  };
  const provider = new OpenAiModelProvider(settings, { record: () => Promise.resolve() });
  const repository = new PassageEmbeddingsRepository(dataSource, undefined as never);
  const meaning = new MeaningSearch({ modelProvider: settings } as AppConfig, repository, provider);
  const lexical = new PassageSearch(dataSource);
  return {
    name: 'now, with meaning',
    dataSource,
    search: {
      statement: (owner, knowledgebase, query) => lexical.statement(owner, knowledgebase, query, FUSED_DEPTH),
      async search(owner, knowledgebase, query, limit) {
        const depth = meaning.applies(query) ? FUSED_DEPTH : limit;
        const hits = await lexical.search(owner, knowledgebase, query, depth, undefined, limit);
        return meaning.applies(query) ? meaning.fuse(owner, knowledgebase, query, limit, hits) : hits;
      },
    },
  };
}

/** The search statement of `commit`, from its sources, for the before-and-after run. */
function searchAt(commit: string, dataSource: DataSource): SearchStatement {
  const directory = join(__dirname, '.cache', `search-${commit}`);
  mkdirSync(directory, { recursive: true });
  const copied = ['passage-search', 'search-query'];
  for (const file of copied) {
    const source = execFileSync('git', ['show', `${commit}:libs/database/src/${file}.ts`], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    // Its other imports (read replicas, say) are today's: only the statement and its parser are that commit's.
    const imports = source.replace(/from '\.\/([\w-]+)'/g, (whole, name: string) =>
      copied.includes(name) ? whole : `from '${join(ROOT, 'libs', 'database', 'src', name)}'`,
    );
    writeFileSync(join(directory, `${file}.ts`), imports);
  }
  const { PassageSearch: Before } = require(join(directory, 'passage-search.ts')) as {
    PassageSearch: new (dataSource: DataSource) => SearchStatement;
  };
  return new Before(dataSource);
}

/** The migrations `commit` has (by the timestamps of their file names), in today's list. */
function migrationsAt(commit: string): typeof migrations {
  const files = execFileSync('git', ['ls-tree', '--name-only', commit, 'libs/database/src/migrations/'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const timestamps = new Set([...files.matchAll(/\/(\d{13})-/g)].map((match) => match[1]));
  return migrations.filter((migration) => timestamps.has(/(\d{13})$/.exec(migration.name)![1]));
}

/** Creates the database and applies the migrations `commit` has. */
async function migrateTo(databaseUrl: string, commit: string): Promise<void> {
  await ensureDatabase(databaseUrl);
  const schema = new DataSource({ ...dataSourceOptions(databaseUrl, 1), migrations: migrationsAt(commit) });
  await schema.initialize();
  await schema.runMigrations({ transaction: 'each' });
  await schema.destroy();
}

/** A database of the run's, dropped with it (also on Ctrl-C). */
async function sideDatabase(
  environment: { databaseUrl: string },
  suffix: string,
  cleanups: (() => Promise<void>)[],
): Promise<string> {
  const url = new URL(environment.databaseUrl);
  url.pathname = `${url.pathname}_${suffix}`;
  const databaseUrl = url.toString();
  const drop = () => dropDatabase(databaseUrl);
  cleanups.push(drop);
  onInterrupt(drop);
  return databaseUrl;
}

export async function connect(databaseUrl: string, poolSize = 2): Promise<DataSource> {
  const dataSource = new DataSource(dataSourceOptions(databaseUrl, poolSize));
  return dataSource.initialize();
}

async function latency(
  environment: { databaseUrl: string },
  corpus: string[],
  total: number,
  runs: number,
  before: string | undefined,
  throughPgbouncer = false,
  withMeaningPhase = false,
): Promise<void> {
  if (corpus.some((passage) => passage.toLowerCase().includes(RARE_WORD))) {
    throw new Error(`The corpus uses "${RARE_WORD}": it would not be rare`);
  }
  const sentences = corpus.flatMap((passage) => passage.split(/(?<=[.;:])\s+/)).filter((text) => text.length > 20);
  const cleanups: (() => Promise<void>)[] = [];
  const opened: DataSource[] = [];
  try {
    // With --before, the passages are loaded under that commit's schema, into a database of their own; a commit
    // with today's migrations is measured on the same database as today's statement.
    const sameSchema = before !== undefined && migrationsAt(before).length === migrations.length;
    let loadUrl = environment.databaseUrl;
    if (before && !sameSchema) {
      loadUrl = await sideDatabase(environment, 'before', cleanups);
      await migrateTo(loadUrl, before);
    }
    const loading = await connect(loadUrl);
    let started = nowMs();
    const [{ id: english }] = await loading.query(`SELECT id FROM languages WHERE iso_2 = 'en'`);
    const knowledgebases = [
      await generateKnowledgebase(
        loading,
        `small (${SMALL_PASSAGES.toLocaleString('en')})`,
        english,
        corpus,
        sentences,
        SMALL_PASSAGES,
      ),
      await generateKnowledgebase(loading, `large (${total.toLocaleString('en')})`, english, corpus, sentences, total),
    ];
    await loading.query('ANALYZE');
    await loading.destroy();
    const passages = (SMALL_PASSAGES + total).toLocaleString('en');
    console.log(`\nloaded and analysed ${passages} passages in ${fixed((nowMs() - started) / 1000)} s`);

    const phases: Phase[] = [];
    // The database today's statement runs on: the loaded one, or its migrated copy.
    let nowUrl = loadUrl;
    if (before && sameSchema) {
      const beforeSource = await connect(loadUrl);
      const dataSource = await connect(loadUrl);
      opened.push(beforeSource, dataSource);
      phases.push(
        { name: `before (${before})`, search: searchAt(before, beforeSource), dataSource: beforeSource },
        { name: 'now', search: new PassageSearch(dataSource), dataSource },
      );
    } else if (before) {
      // A file-level copy of the loaded database, then today's migrations on it, as on an existing deployment.
      const afterUrl = await sideDatabase(environment, 'after', cleanups);
      nowUrl = afterUrl;
      const afterName = new URL(afterUrl).pathname.slice(1);
      const admin = await connect(environment.databaseUrl, 1);
      opened.push(admin);
      await admin.query(`CREATE DATABASE ${afterName} TEMPLATE ${new URL(loadUrl).pathname.slice(1)}`);
      started = nowMs();
      const applied = await runMigrations(afterUrl);
      console.log(`applied ${applied.join(', ')} to the loaded passages in ${fixed((nowMs() - started) / 1000)} s`);
      const beforeSource = await connect(loadUrl);
      const afterSource = await connect(afterUrl);
      opened.push(beforeSource, afterSource);
      await afterSource.query('ANALYZE');
      phases.push(
        { name: `before (${before})`, search: searchAt(before, beforeSource), dataSource: beforeSource },
        { name: 'now', search: new PassageSearch(afterSource), dataSource: afterSource },
      );
    } else {
      const dataSource = await connect(loadUrl);
      opened.push(dataSource);
      phases.push({ name: 'now', search: new PassageSearch(dataSource), dataSource });
    }
    if (withMeaningPhase) phases.push(await meaningPhase(nowUrl, opened, cleanups));
    if (throughPgbouncer) {
      // Today's statement again, through a PgBouncer in transaction mode with one server connection (the worst case:
      // every client's transactions on one connection), on the database today's statement runs on.
      const binary = pgbouncerBinary();
      if (!binary) throw new Error('--pgbouncer: pgbouncer is not installed (apt-get install pgbouncer)');
      const bouncer = await startPgbouncer(binary, nowUrl, 1);
      // Stopped on Ctrl-C or SIGTERM too, which end the run without its own cleanups.
      const forget = onInterrupt(() => bouncer.stop());
      cleanups.push(async () => {
        forget();
        await bouncer.stop();
      });
      const dataSource = await connect(bouncer.url);
      opened.push(dataSource);
      phases.push({ name: 'now, through PgBouncer', search: new PassageSearch(dataSource), dataSource });
    }
    await measure(
      `Latency: ${SMALL_PASSAGES.toLocaleString('en')} passages beside ${total.toLocaleString('en')} (another account's)`,
      phases,
      knowledgebases,
      runs,
    );
  } finally {
    for (const dataSource of opened) if (dataSource.isInitialized) await dataSource.destroy();
    for (const cleanup of cleanups.reverse()) await cleanup();
  }
}

async function main(): Promise<void> {
  const options = process.argv.slice(2);
  const beforeAt = options.indexOf('--before');
  const before = beforeAt >= 0 ? options.splice(beforeAt, 2)[1] : undefined;
  const bouncerAt = options.indexOf('--pgbouncer');
  const throughPgbouncer = bouncerAt >= 0 && options.splice(bouncerAt, 1).length > 0;
  const latencyOnlyAt = options.indexOf('--latency-only');
  const latencyOnly = latencyOnlyAt >= 0 && options.splice(latencyOnlyAt, 1).length > 0;
  const meaningAt = options.indexOf('--meaning');
  const withMeaningPhase = meaningAt >= 0 && options.splice(meaningAt, 1).length > 0;
  const lostAt = options.indexOf('--lost');
  const lostAgainst = lostAt >= 0 ? options.splice(lostAt, 2)[1] : undefined;
  const keepAt = options.indexOf('--keep');
  const keep = keepAt >= 0 && options.splice(keepAt, 1).length > 0;
  const total = Number(options[0] ?? 1_000_000);
  const runs = Number(options[1] ?? 100);
  const environment = await createBenchEnvironment();
  try {
    const corpus = await corpusPassages();
    const languages = await connect(environment.databaseUrl, 1);
    const [{ id: english }] = await languages.query(`SELECT id FROM languages WHERE iso_2 = 'en'`);
    await languages.destroy();
    if (lostAgainst) await lostQuestions(environment, english, lostAgainst, withMeaningPhase);
    else if (!latencyOnly) await recall(environment, english, corpus, before);
    // 0 passages: recall only.
    if (total > 0) await latency(environment, corpus, total, runs, before, throughPgbouncer, withMeaningPhase);
  } finally {
    await environment.clean({ keepDatabase: keep });
    if (keep) console.log(`\nkept ${environment.databaseUrl}`);
  }
}

// Imported (by a tuning script), it only lends its corpus and measures.
if (require.main === module) runMain(main, { comparesBuilds: true });
