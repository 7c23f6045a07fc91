/**
 * OpenAI's limits on one embeddings request (API reference, "Create embeddings", `input`): at most 2048 inputs, and
 * at most 300,000 tokens summed over them. (Each input may also have at most 8192 tokens: the caller's chunks must
 * keep under it; an input over it is refused by the provider, as a permanent error.)
 */
export const EMBEDDING_LIMITS = { maxInputs: 2048, maxTokens: 300_000 };

/**
 * An upper bound of an input's tokens without the model's tokenizer: its UTF-8 bytes. A byte-level BPE token is at
 * least one byte, so no text has more tokens than bytes; characters / 3 does not hold (measured with cl100k_base:
 * Chinese 0.91, emoji 0.70, base64 1.39 characters a token; English prose 3.9, see the README).
 */
export function tokenBound(input: string): number {
  return Buffer.byteLength(input, 'utf8');
}

/**
 * Splits inputs into consecutive batches within `limits`, in order: `[start, end)` of each. An input whose bound
 * alone passes the token limit goes in a batch of its own (the provider judges it).
 */
export function embeddingBatches(inputs: string[], limits = EMBEDDING_LIMITS): Array<[number, number]> {
  const batches: Array<[number, number]> = [];
  let start = 0;
  let tokens = 0;
  inputs.forEach((input, index) => {
    const bound = tokenBound(input);
    if (index > start && (index - start >= limits.maxInputs || tokens + bound > limits.maxTokens)) {
      batches.push([start, index]);
      start = index;
      tokens = 0;
    }
    tokens += bound;
  });
  if (inputs.length > start) batches.push([start, inputs.length]);
  return batches;
}
