import { PassageSplitter, rejoinPassages, splitIntoPassages } from './passage.splitter';

/** Deterministic pseudo-random prose: paragraphs of varied length, some far longer than a passage. */
function generateText(paragraphCount: number): string {
  const words = [
    'search',
    'index',
    'passage',
    'assistant',
    'customer',
    'billing',
    'refund',
    'policy',
    'delivery',
    'account',
  ];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  const paragraphs: string[] = [];
  for (let paragraph = 0; paragraph < paragraphCount; paragraph += 1) {
    const sentences: string[] = [];
    const sentenceCount = 1 + (next() % (paragraph % 5 === 0 ? 40 : 6));
    for (let sentence = 0; sentence < sentenceCount; sentence += 1) {
      const wordCount = 4 + (next() % 14);
      const sentenceWords = Array.from(
        { length: wordCount },
        (_, index) => `${words[next() % words.length]}${paragraph}x${sentence}x${index}`,
      );
      const joined = sentenceWords.join(' ');
      sentences.push(`${joined[0].toUpperCase()}${joined.slice(1)}${['.', '!', '?'][next() % 3]}`);
    }
    paragraphs.push(sentences.join(' '));
  }
  return paragraphs.join('\n\n');
}

function longestSharedPrefixWithSuffix(previous: string, next: string): number {
  for (let length = Math.min(previous.length, next.length); length > 0; length -= 1) {
    if (previous.endsWith(next.slice(0, length))) return length;
  }
  return 0;
}

describe('splitIntoPassages', () => {
  const text = generateText(60);
  const passages = splitIntoPassages(text);

  it('produces passages of bounded size', () => {
    expect(passages.length).toBeGreaterThan(10);
    for (const passage of passages) {
      expect(passage.trim()).toBe(passage);
      expect(passage.length).toBeGreaterThan(0);
      expect(passage.length).toBeLessThanOrEqual(1000 + 150 + 2);
    }
    const fullPassages = passages.slice(0, -1).filter((passage) => passage.length >= 500);
    expect(fullPassages.length).toBeGreaterThan(passages.length / 2);
  });

  it('starts each passage after the first with whole sentences of the previous one, at most the overlap', () => {
    let overlapping = 0;
    for (let index = 1; index < passages.length; index += 1) {
      const shared = longestSharedPrefixWithSuffix(passages[index - 1], passages[index]);
      expect(shared).toBeLessThanOrEqual(150);
      if (shared === 0) continue;
      overlapping += 1;
      const previous = passages[index - 1];
      // The repeated part starts a sentence of the previous passage and ends with it.
      expect(previous.slice(0, previous.length - shared)).toMatch(/[.!?]\s+$/);
    }
    expect(overlapping).toBeGreaterThan(passages.length / 4);
  });

  it('ends every passage where a sentence ends', () => {
    for (const passage of passages) expect(passage).toMatch(/[.!?]$/);
  });

  it('covers every word of the text', () => {
    const covered = new Set(passages.flatMap((passage) => passage.split(/\s+/)));
    for (const word of text.split(/\s+/)) expect(covered.has(word)).toBe(true);
  });

  it('gives the same passages for the text in parts (paragraphs grouped as pages), each as soon as it is complete', () => {
    const paragraphs = text.split('\n\n');
    const splitter = new PassageSplitter();
    const handedOut: string[][] = [];
    for (let start = 0; start < paragraphs.length; start += 3) {
      handedOut.push(splitter.add(paragraphs.slice(start, start + 3).join('\n\n')));
    }
    handedOut.push(splitter.finish());
    expect(handedOut.flat()).toEqual(passages);
    expect(handedOut.filter((batch) => batch.length > 0).length).toBeGreaterThan(5);
    expect(splitter.finish()).toEqual([]);
  });

  it('returns a short text as one passage and nothing for blank text', () => {
    expect(splitIntoPassages('A short note.\n\nWith two paragraphs.')).toEqual([
      'A short note.\n\nWith two paragraphs.',
    ]);
    expect(splitIntoPassages('  \n\n ')).toEqual([]);
  });

  it('splits long paragraphs at sentence boundaries', () => {
    const sentence = (index: number) => `Sentence number ${index} has a few words in it.`;
    const paragraph = Array.from({ length: 30 }, (_, index) => sentence(index)).join(' ');
    const result = splitIntoPassages(paragraph, { targetLength: 200, overlap: 0 });
    expect(result.length).toBeGreaterThan(5);
    for (const passage of result) {
      expect(passage).toMatch(/^Sentence number \d+/);
      expect(passage).toMatch(/in it\.$/);
    }
  });

  it('cuts CJK text without spaces and keeps it complete', () => {
    // Distinct ideographs, so the repeated overlap can be located exactly.
    const ideographs = Array.from({ length: 700 }, (_, index) => String.fromCharCode(0x4e00 + ((index * 37) % 5000)));
    const cjk = `${ideographs.join('')}。次の文です！`;
    const result = splitIntoPassages(cjk, { targetLength: 100, overlap: 20 });
    expect(result.length).toBeGreaterThan(5);
    for (const passage of result) expect(passage.length).toBeLessThanOrEqual(100 + 20 + 2);
    const withoutOverlap = result.map((passage, index) =>
      index === 0 ? passage : passage.slice(longestSharedPrefixWithSuffix(result[index - 1], passage)),
    );
    expect(withoutOverlap.join('')).toBe(cjk);
  });

  it('splits CJK sentences at full stops', () => {
    const sentence = '今日は良い天気です。';
    const result = splitIntoPassages(sentence.repeat(30), { targetLength: 50, overlap: 0 });
    for (const passage of result) expect(passage.endsWith('。')).toBe(true);
  });

  it('keeps an abbreviation, an initial or a list number inside its sentence', () => {
    const text = [
      'Filters are cleaned monthly, e.g. with warm water. Call No. 5 for help. Ask J. Smith first.',
      '3. Rinse the filter. The machine is then ready.',
    ].join(' ');
    const result = splitIntoPassages(text, { targetLength: 60, overlap: 0 });
    expect(result).toEqual([
      'Filters are cleaned monthly, e.g. with warm water.',
      'Call No. 5 for help. Ask J. Smith first.',
      '3. Rinse the filter. The machine is then ready.',
    ]);
  });

  it('keeps an initial after an opening quote or bracket inside its sentence, so no passage starts mid-sentence', () => {
    const text = 'Initials such as "J. Smith" or (K. Jones) end no sentence. Each passage starts a sentence.';
    const result = splitIntoPassages(text, { targetLength: 70, overlap: 0 });
    expect(result).toEqual([
      'Initials such as "J. Smith" or (K. Jones) end no sentence.',
      'Each passage starts a sentence.',
    ]);
  });

  it('drops decoration and keeps the section heading with every passage of its section', () => {
    const text = [
      '5. Termination',
      '--------------',
      '',
      'The rights granted under this License will terminate automatically if You fail to comply.',
      '',
      '************************************************************************',
      '*                                                                      *',
      '*  6. Disclaimer of Warranty                                           *',
      '*  -------------------------                                           *',
      '*                                                                      *',
      '*  Covered Software is provided under this License on an "as is"       *',
      '*  basis, without warranty of any kind.                                *',
      '*                                                                      *',
      '*  The entire risk as to the quality and performance of the Covered    *',
      '*  Software is with You.                                               *',
      '*                                                                      *',
      '************************************************************************',
      '',
      '=====',
      '',
      'Should any Covered Software prove defective in any respect, You assume the cost of any necessary servicing.',
    ].join('\n');
    const result = splitIntoPassages(text, { targetLength: 200, overlap: 0 });
    expect(result).toEqual([
      '5. Termination\n\nThe rights granted under this License will terminate automatically if You fail to comply.',
      '6. Disclaimer of Warranty\n\nCovered Software is provided under this License on an "as is"\nbasis, without ' +
        'warranty of any kind.',
      '6. Disclaimer of Warranty\n\nThe entire risk as to the quality and performance of the Covered\nSoftware is ' +
        'with You.',
      '6. Disclaimer of Warranty\n\nShould any Covered Software prove defective in any respect, You assume the ' +
        'cost of any necessary servicing.',
    ]);
    for (const passage of result) expect(passage).not.toMatch(/\*|---|===/);
  });

  it('drops a heading from the passages of a numbered paragraph outside its number', () => {
    const result = splitIntoPassages(
      'Preamble\n\nThe licenses for most software are designed to take away your freedom.\n\n' +
        '3. You may copy and distribute the Program in object code form.\n\n3.1. Or in source code form.',
      { targetLength: 80, overlap: 0 },
    );
    expect(result).toEqual([
      'Preamble\n\nThe licenses for most software are designed to take away your freedom.',
      '3. You may copy and distribute the Program in object code form.',
      '3.1. Or in source code form.',
    ]);
  });

  it('keeps a heading with the text after it, never alone at the end of a passage', () => {
    const filler = 'A sentence that fills most of the passage before the heading comes along.';
    const result = splitIntoPassages(`${filler}\n\nRefunds\n\nRefunds take five days.`, {
      targetLength: 90,
      overlap: 0,
    });
    expect(result).toEqual([filler, 'Refunds\n\nRefunds take five days.']);
  });

  it('rejects an overlap that is not smaller than the target length', () => {
    expect(() => splitIntoPassages('text', { targetLength: 100, overlap: 100 })).toThrow(RangeError);
  });
});

describe('rejoinPassages', () => {
  it('puts back the text an earlier cut made passages of, each repeat of the previous end removed', () => {
    const first = 'Opening hours are nine to five. Deliveries leave every morning.';
    const second = 'Deliveries leave every morning.\n\nRefunds take five days.';
    const third = 'Refunds take five days. Gift cards never expire.';
    expect(rejoinPassages([first, second, third])).toBe(
      'Opening hours are nine to five. Deliveries leave every morning.\n\nRefunds take five days. Gift cards never expire.',
    );
  });

  it('keeps passages that repeat nothing apart as paragraphs, and a CJK cut joined as it was', () => {
    expect(rejoinPassages(['One.', 'Two.'])).toBe('One.\n\nTwo.');
    const ideographs = Array.from({ length: 300 }, (_, index) => String.fromCharCode(0x4e00 + index)).join('');
    expect(rejoinPassages([ideographs.slice(0, 200), ideographs.slice(180)], 20)).toBe(ideographs);
  });
});
