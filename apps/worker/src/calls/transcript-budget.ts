/** A transcript as the analysis sends it: whole, or cut in the middle to fit the budget. */
export interface BudgetedTranscript {
  text: string;
  /** Its turns (lines), before any cut. */
  turns: number;
  /** The turns left out in the middle (0: whole); a turn shortened at either end counts as kept. */
  cutTurns: number;
}

/** The share of the budget kept from the transcript's start; the rest comes from its end. */
const HEAD_SHARE = 0.25;

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * The transcript within `budget` tokens, a token counted as a UTF-8 byte: no token of a byte-level BPE is shorter, so
 * a transcript within the budget fits it whatever its language (English prose is about four bytes a token, so the
 * bound is four times too careful there, and exact for emoji or CJK text). Longer ones keep their first turns (a
 * quarter of the budget: who called and why) and their last (the rest: how it ended) and say, on a line where the
 * middle was, how many turns were cut. A turn longer than its share is shortened to it (its start kept, at the start;
 * its end, at the end).
 */
export function budgetTranscript(transcript: string, budget: number): BudgetedTranscript {
  const lines = transcript.split('\n');
  if (bytes(transcript) <= budget) return { text: transcript, turns: lines.length, cutTurns: 0 };
  const marker = (cut: number) => `[... ${cut} turn${cut === 1 ? '' : 's'} cut here to fit the model's budget ...]`;
  // The marker's length at its longest; each line also takes its line break.
  const room = budget - bytes(marker(lines.length)) - 2;
  const headRoom = Math.floor(room * HEAD_SHARE);
  if (lines.length === 1) {
    const middle = " [... cut here to fit the model's budget ...] ";
    const text = `${startWithin(transcript, headRoom)}${middle}${endWithin(transcript, room - headRoom)}`;
    return { text, turns: 1, cutTurns: 0 };
  }
  const head: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (used + bytes(line) + 1 > headRoom) break;
    head.push(line);
    used += bytes(line) + 1;
  }
  if (head.length === 0) {
    head.push(`${startWithin(lines[0], headRoom - 4)}...`);
    used = bytes(head[0]) + 1;
  }
  const tailRoom = room - used;
  const tail: string[] = [];
  used = 0;
  for (let index = lines.length - 1; index >= head.length; index--) {
    const line = lines[index];
    if (used + bytes(line) + 1 > tailRoom) break;
    tail.unshift(line);
    used += bytes(line) + 1;
  }
  if (tail.length === 0 && lines.length > head.length) tail.push(`...${endWithin(lines.at(-1)!, tailRoom - 4)}`);
  const cutTurns = lines.length - head.length - tail.length;
  return { text: [...head, marker(cutTurns), ...tail].join('\n'), turns: lines.length, cutTurns };
}

/** The longest start of `text` of at most `limit` UTF-8 bytes, never splitting a character. */
function startWithin(text: string, limit: number): string {
  let length = 0;
  let end = 0;
  for (const character of text) {
    length += bytes(character);
    if (length > limit) break;
    end += character.length;
  }
  return text.slice(0, end);
}

/** The longest end of `text` of at most `limit` UTF-8 bytes, never splitting a character. */
function endWithin(text: string, limit: number): string {
  const characters = [...text];
  let length = 0;
  let start = characters.length;
  while (start > 0 && length + bytes(characters[start - 1]) <= limit) {
    start--;
    length += bytes(characters[start]);
  }
  return characters.slice(start).join('');
}
