/**
 * Questions as a caller or a user might ask them, over real documents: this project's README and docs, and the
 * Apache License 2.0 as TypeScript ships it. `answer` is a piece of the passage that answers the question,
 * compared with backticks, asterisks and runs of whitespace removed. Two questions carry a typo on purpose.
 */
export interface SearchQuestion {
  question: string;
  answer: string;
}

export const SEARCH_QUESTIONS: SearchQuestion[] = [
  { question: 'how long does a login session last before it expires', answer: 'lifetime of a login session token' },
  { question: 'what is the largest file I can upload to a knowledgebase', answer: 'at most 20 MB, in Postgres' },
  {
    question: 'what happens if a website answers 503 or 429 while it is crawled',
    answer: 'retried with exponential backoff, and fails the document after the last attempt',
  },
  { question: 'how are call webhooks signed', answer: 'signed as Standard Webhooks do' },
  { question: 'what happens to API requests when Redis is down', answer: 'The request limiter fails open' },
  { question: 'why do logins fail while redis is unreachable', answer: 'The login throttle fails closed' },
  {
    question: 'how do I retry a create request safely without duplicates',
    answer: 'accepts an Idempotency-Key header',
  },
  { question: 'how many rows does the CSV lead import write per transaction', answer: 'in batches of 1,000 rows' },
  { question: 'what happens to calls that never get a final status', answer: 'are ended failed by the worker' },
  {
    question: 'can I send my token in the query string',
    answer: 'Authorization: Bearer <token> only (never the query string)',
  },
  { question: 'how are api keys stored', answer: 'stored only as SHA-256 hashes' },
  {
    question: 'what happens when the sip provider fails while a trunk is updated',
    answer: 'the trunks this request made are deleted and the row stays as it was',
  },
  { question: 'how are the header values of tools encrypted', answer: 'stored sealed with AES-256-GCM' },
  {
    question: 'how does an operator give a phone number to an account',
    answer: 'Numbers bought from a carrier are given to an account by operations staff',
  },
  {
    question: 'what does deleting an assistant do to its calls',
    answer: 'Deleting an assistant keeps its call history',
  },
  { question: 'how many retries can a campaign make', answer: 'max_retries 1-5, retry_interval 10-4320 minutes' },
  {
    question: 'can a lead phone number be added twice to a campaign',
    answer: 'the same number twice in a campaign is 422',
  },
  {
    question: 'how often are documents stuck in processing enqueued again',
    answer: 're-enqueues documents left processing for 15 minutes',
  },
  {
    question: 'which addresses does the outbound client refuse',
    answer: 'refuses private, loopback, link-local, CGNAT, multicast and metadata addresses',
  },
  { question: 'how do I run postgres and redis on a laptop', answer: 'docker compose up -d' },
  { question: 'may I use the trademarks of the licensor', answer: 'does not grant permission to use the trade names' },
  {
    question: 'when does my patent license end if I start litigation',
    answer: 'shall terminate as of the date such litigation is filed',
  },
  {
    question: 'what must I do with files I modified when I redistribute them',
    answer: 'carry prominent notices stating that You changed the files',
  },
  { question: 'is there any warrenty on the work', answer: 'WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND' },
  { question: 'is a contributor liable for damages', answer: 'shall any Contributor be liable to You for damages' },
  { question: 'may I charge a fee for support', answer: 'charge a fee for, acceptance of support' },
  {
    question: 'how much ownership means control of a legal entity',
    answer: 'fifty percent (50%) or more of the outstanding shares',
  },
  {
    question: 'do I have to include the NOTICE file when I distribute',
    answer: 'readable copy of the attribution notices contained within such NOTICE file',
  },
  {
    question: 'did the processes recover on their own after the outage',
    answer: 'Both processes recovered on their own',
  },
  { question: 'how much memory does the worker need for a 20 MB PDF', answer: 'Worker peak memory on a 20 MiB PDF' },
  {
    question: 'which hostile values were sent in the malformed input run',
    answer: 'hostile values (NUL, lone surrogates',
  },
  { question: 'how are webhok deliveries retried', answer: 'retried with exponential backoff for about a day' },
];
