/** One event of a `text/event-stream` body. */
export interface ServerSentEvent {
  id?: string;
  /** `message` when the block names none, as EventSource does. */
  event: string;
  /** The `data` field as sent (JSON in this service's streams). */
  data: string;
}

/**
 * The events of a `text/event-stream` body as EventSource reads them: blocks split by a blank line, comment lines
 * (`: keep-alive`) skipped, a block without data (`retry: 1000`) dropped. Ends with the body.
 */
export async function* serverSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
      }
      const data = fields.get('data');
      if (data === undefined) continue;
      yield { id: fields.get('id'), event: fields.get('event') ?? 'message', data };
    }
  }
}
