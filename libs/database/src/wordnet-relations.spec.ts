import { RELATION_WEIGHTS, readWordnetRelations, type WordRelation } from './wordnet-relations';

describe('readWordnetRelations', () => {
  let relations: WordRelation[];
  const related = (word: string) =>
    new Map(relations.filter(([from]) => from === word).map(([, to, weight]) => [to, weight]));

  beforeAll(() => {
    relations = readWordnetRelations();
  }, 30_000);

  it('relates synonyms, derivations and similar adjectives, each at its weight', () => {
    expect(related('kid').get('child')).toBe(RELATION_WEIGHTS.synonym);
    expect(related('child').get('kid')).toBe(RELATION_WEIGHTS.synonym);
    expect(related('decide').get('decision')).toBe(RELATION_WEIGHTS.derivation);
    expect(related('broken').get('damaged')).toBe(RELATION_WEIGHTS.similar);
    expect(related('price').get('cost')).toBe(RELATION_WEIGHTS.synonym);
  });

  it('weighs a rarer sense less, and leaves out the rarest', () => {
    // "end" is mostly a noun (the end of the road); as a verb it means to terminate, a less frequent sense.
    const end = related('end');
    expect(end.get('terminate')).toBeGreaterThan(0);
    expect(end.get('terminate')).toBeLessThanOrEqual(RELATION_WEIGHTS.synonym);
    // A kid is a goat's young in a rare sense of the word: too rare to be related.
    expect(related('kid').has('goat')).toBe(false);
  });

  it('relates no names, and multi-word terms only as phrasal verbs standing for single words', () => {
    // Paris the city and Ada the language are names in WordNet (capitalised): nothing stands for them.
    expect(related('paris').size).toBe(0);
    expect(related('ada').size).toBe(0);
    expect(relations.some(([, to]) => /[^a-z-]/.test(to))).toBe(false);
    expect(relations.some(([word]) => !/^[a-z-]+$|^[a-z]+( [a-z]+){1,2}$/.test(word))).toBe(false);
    // A verb's phrase, kept though the tagged corpus rarely saw it; a noun's (credit card) is not.
    expect(related('call off').get('cancel')).toBe(RELATION_WEIGHTS.synonym);
    expect(related('get rid of').get('remove')).toBeGreaterThan(0);
    expect(related('credit card').size).toBe(0);
  });

  it('reads the words the tagged corpus never saw apart, each sense at full weight', () => {
    // "website" is newer than the corpus: left out of the common words' relations, read with `unseen`.
    expect(related('website').size).toBe(0);
    const unseen = readWordnetRelations(undefined, { unseen: true });
    const website = new Map(unseen.filter(([from]) => from === 'website').map(([, to, weight]) => [to, weight]));
    expect(website.get('site')).toBe(RELATION_WEIGHTS.synonym);
    // Each word is read once, by one of the two, and no phrasal verb among the unseen.
    const seen = new Set(relations.map(([word]) => word));
    expect(unseen.some(([word]) => seen.has(word) || word.includes(' '))).toBe(false);
  });
});
