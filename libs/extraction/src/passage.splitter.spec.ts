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

  /** Text as a PDF gives it: lines of at most about 70 characters, no blank line between paragraphs. */
  const asPdfLines = (text: string) => text.replace(/(.{1,70})(?:\s+|$)/g, '$1\n').trim();
  const intro = asPdfLines(
    'This License applies to any program which contains a notice placed by the copyright holder saying it may be ' +
      'distributed under the terms of this General Public License. Each licensee is addressed as you, and the ' +
      'Program refers to any such program or work. Translation is included without limitation in the term ' +
      'modification. Activities other than copying, distribution and ' +
      'modification are not covered by this License; they are outside its scope. The act of running the Program is ' +
      'not restricted, and the output from the Program is covered only if its contents constitute a work based on the ' +
      'Program. Whether that is true depends on what the Program does.',
  );
  const clause = asPdfLines(
    "1. You may copy and distribute verbatim copies of the Program's source code as you receive it, in any medium, " +
      'provided that you publish on each copy an appropriate copyright notice. Keep intact all the notices that ' +
      'refer to this License and give any other recipients of the Program a copy of this License. You may charge a ' +
      'fee for the physical act of transferring a copy, and you may offer warranty protection in exchange for a fee.',
  );

  it('joins a sentence a page break cut, whether the pages come whole or one by one', () => {
    const pages = [
      `${intro}\nBook a check-out inspection with the estate office at least one week before`,
      `you leave. Forward your post with the postal service; we do not keep post for former residents.\n${intro}`,
    ];
    const whole = splitIntoPassages(pages.join('\n\n'));
    const splitter = new PassageSplitter();
    expect([...splitter.add(pages[0]), ...splitter.add(pages[1]), ...splitter.finish()]).toEqual(whole);
    expect(whole.length).toBeGreaterThan(1);
    expect(whole.filter((passage) => passage.includes('one week before\nyou leave.'))).toHaveLength(1);
    for (const passage of whole) expect(passage).toMatch(/[.!?]$/);
    // A line that looks like a heading is none when the next paragraph carries on its sentence.
    const heading = 'Book a check-out inspection';
    const parts = [`${intro}\n\n${heading}`, 'at least one week before you leave.\n\nMoving out\n\nReturn every key.'];
    const splitter2 = new PassageSplitter({ targetLength: 700, overlap: 0 });
    const streamed = [...splitter2.add(parts[0]), ...splitter2.add(parts[1]), ...splitter2.finish()];
    expect(streamed).toEqual(splitIntoPassages(parts.join('\n\n'), { targetLength: 700, overlap: 0 }));
    expect(streamed).toEqual([
      intro,
      `${heading}\nat least one week before you leave.\n\nMoving out\n\nReturn every key.`,
    ]);
    // A paragraph that ends a sentence stays one, whatever the next starts with.
    expect(splitIntoPassages('Open the app.\n\niOS users tap Settings.')).toEqual([
      'Open the app.\n\niOS users tap Settings.',
    ]);
  });

  it('keeps a numbered clause on a line of its own whole, where a PDF gives paragraphs only as lines', () => {
    const following = asPdfLines(
      '2. You may modify your copy or copies of the Program or any portion of it, and copy and distribute such ' +
        'modifications under the terms of Section 1 above, provided that you also meet all of these conditions:',
    );
    const items =
      'a) You must cause the modified files to carry prominent notices.\nb) You must license it as a whole.';
    const passages = splitIntoPassages(`${intro}\n${clause}\n${following}\n${items}\n${intro}`);
    expect(passages.filter((passage) => passage.includes(clause))).toHaveLength(1);
    // Lines that start no clause are packed as sentences, as before.
    expect(passages.filter((passage) => passage.includes(intro))).toHaveLength(2);
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

  it('gives back, cut again, the passages this cutter wrote: their headings repeated once, their repeats removed', () => {
    const sections = generateText(12)
      .split('\n\n')
      .map((paragraph, index) =>
        index % 4 === 0 ? `${index / 4 + 1}. Section ${index / 4 + 1}\n\n${paragraph}` : paragraph,
      );
    const passages = splitIntoPassages(sections.join('\n\n'));
    expect(passages.filter((passage) => passage.startsWith('1. Section 1\n\n')).length).toBeGreaterThan(1);
    const text = rejoinPassages(passages);
    expect(text.match(/^1\. Section 1$/gm)).toHaveLength(1);
    expect(splitIntoPassages(text)).toEqual(passages);
  });

  it('keeps passages that repeat nothing apart as paragraphs, and a CJK cut joined as it was', () => {
    expect(rejoinPassages(['One.', 'Two.'])).toBe('One.\n\nTwo.');
    expect(rejoinPassages(['| Plan | Price |', '| Basic | 5 |'])).toBe('| Plan | Price |\n\n| Basic | 5 |');
    const ideographs = Array.from({ length: 300 }, (_, index) => String.fromCharCode(0x4e00 + index)).join('');
    expect(rejoinPassages([ideographs.slice(0, 200), ideographs.slice(180)], 20)).toBe(ideographs);
  });
});
