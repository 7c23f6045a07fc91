import { LEAST_NEIGHBOUR_COSINE, NEIGHBOUR_WEIGHT, readWordNeighbours } from './word-neighbours';

describe('readWordNeighbours', () => {
  const relations = readWordNeighbours();
  const related = (word: string) =>
    new Map(relations.filter(([from]) => from === word).map(([, to, weight]) => [to, weight]));

  it('relates words WordNet leaves apart, closer neighbours weighing more, never as much as the word', () => {
    const bike = related('bike');
    expect(bike.get('bicycle')).toBeGreaterThan(NEIGHBOUR_WEIGHT * 0.85);
    expect(related('accident').get('crash')).toBeGreaterThan(related('accident').get('blast') ?? 0);
    for (const [, , weight] of relations) {
      expect(weight).toBeGreaterThanOrEqual(NEIGHBOUR_WEIGHT * LEAST_NEIGHBOUR_COSINE - 0.001);
      expect(weight).toBeLessThanOrEqual(NEIGHBOUR_WEIGHT);
    }
  });

  it('leaves out pieces of contractions', () => {
    expect(related('lose').has('wo')).toBe(false);
    expect(relations.every(([, to]) => to.length >= 3)).toBe(true);
  });
});
