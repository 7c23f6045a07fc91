import { budgetTranscript } from './transcript-budget';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const turns = (count: number, text = (index: number) => `turn ${index} ${'words '.repeat(10)}`) =>
  Array.from({ length: count }, (_, index) => `${index % 2 ? 'Customer' : 'Assistant'}: ${text(index)}`);

describe('budgetTranscript', () => {
  it('keeps a transcript within the budget whole', () => {
    const transcript = turns(10).join('\n');
    expect(budgetTranscript(transcript, bytes(transcript))).toEqual({ text: transcript, turns: 10, cutTurns: 0 });
  });

  it('keeps whole turns from the start and, more, from the end, and says how many were cut in the middle', () => {
    const lines = turns(1000);
    const budget = 8000;
    const cut = budgetTranscript(lines.join('\n'), budget);
    expect(bytes(cut.text)).toBeLessThanOrEqual(budget);
    const kept = cut.text.split('\n');
    const marker = kept.findIndex((line) => line.startsWith('[...'));
    expect(kept[marker]).toBe(`[... ${cut.cutTurns} turns cut here to fit the model's budget ...]`);
    const head = kept.slice(0, marker);
    const tail = kept.slice(marker + 1);
    expect(head).toEqual(lines.slice(0, head.length));
    expect(tail).toEqual(lines.slice(lines.length - tail.length));
    expect(head.length + tail.length + cut.cutTurns).toBe(1000);
    expect(tail.length).toBeGreaterThan(head.length * 2);
    expect(cut.turns).toBe(1000);
  });

  it('counts bytes, not characters: text of many bytes a character is cut sooner, never over the budget', () => {
    const lines = turns(300, (index) => `${index} ${'日本語の文章です。'.repeat(8)}`);
    const cut = budgetTranscript(lines.join('\n'), 6000);
    expect(bytes(cut.text)).toBeLessThanOrEqual(6000);
    expect(cut.cutTurns).toBeGreaterThan(0);
    expect(cut.text).not.toContain('\uFFFD');
  });

  it('shortens a turn longer than its share, whole characters only', () => {
    const giant = `Customer: ${'😀'.repeat(5000)}`;
    const lines = [giant, ...turns(5), giant];
    const cut = budgetTranscript(lines.join('\n'), 4000);
    expect(bytes(cut.text)).toBeLessThanOrEqual(4000);
    const kept = cut.text.split('\n');
    expect(kept[0].startsWith('Customer: 😀')).toBe(true);
    expect(kept[0].endsWith('...')).toBe(true);
    expect(kept.at(-1)!.startsWith('...😀')).toBe(true);
    expect(cut.text.isWellFormed()).toBe(true);
    const single = budgetTranscript(giant, 2000);
    expect(bytes(single.text)).toBeLessThanOrEqual(2000);
    expect(single.text).toContain("[... cut here to fit the model's budget ...]");
    expect(single.text.isWellFormed()).toBe(true);
  });
});
