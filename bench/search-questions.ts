/**
 * Questions as a caller or a user might ask them, over real documents: this project's README and docs, and the
 * Apache License 2.0 as TypeScript ships it. `answer` is a piece of the passage that answers the question,
 * compared with backticks, asterisks and runs of whitespace removed. Two questions carry a typo on purpose.
 */
export interface SearchQuestion {
  question: string;
  answer: string;
  /** Kept out of every tuning run: the figures on these are the ones that tell. */
  heldOut?: boolean;
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

/**
 * Questions as a caller would speak them, mostly in other words than the answer's, over a shop's FAQ, its
 * returns policy and its price list (bench/search-corpus) and the Apache License 2.0. Written before any tuning of
 * related words; every third is held out.
 */
export const PARAPHRASED_QUESTIONS: SearchQuestion[] = [
  { question: 'are you open on sunday', answer: 'on Sunday from 11:00 to 16:00' },
  { question: 'what time do you close on weekdays', answer: 'Monday to Saturday from 9:00 to 18:00' },
  {
    question: 'can I come in on christmas eve',
    answer: 'except in December, when we trade as on a Sunday',
    heldOut: true,
  },
  { question: 'how quickly will my stuff get here', answer: 'Standard delivery takes two to four working days' },
  { question: 'do you ship to the islands', answer: 'islands are served by a partner courier' },
  {
    question: 'where is my package, it has not moved for a week',
    answer: 'no movement for five working days',
    heldOut: true,
  },
  { question: 'can I pay in installments', answer: 'three monthly instalments without interest' },
  { question: 'do you take cash', answer: 'Cash is accepted in our shops only' },
  {
    question: 'how long is a gift card good for',
    answer: 'stay valid for two years from the date of purchase',
    heldOut: true,
  },
  { question: 'can I get money back for a voucher', answer: 'A voucher cannot be exchanged for cash' },
  { question: 'how do I delete my account', answer: 'close your account at any time from the settings page' },
  {
    question: 'will someone put the wardrobe together for me',
    answer: 'Our fitters assemble furniture in your home',
    heldOut: true,
  },
  { question: 'is the bunk bed safe for my kid', answer: 'Bunk beds are not suitable for children under six' },
  { question: 'can I send something back if I just changed my mind', answer: 'without giving a reason' },
  { question: 'how long do I have to return an item', answer: 'within 30 days of receiving it', heldOut: true },
  {
    question: 'do I get my money back if the box was opened',
    answer: 'We may reduce the refund when an item shows wear',
  },
  { question: 'when will I see the refund on my card', answer: 'within 14 days of receiving the returned goods' },
  { question: 'is the express fee refunded', answer: 'Express delivery surcharges are not refunded', heldOut: true },
  { question: 'my table arrived broken, what do I do', answer: 'Report damage seen on arrival within 48 hours' },
  { question: 'the lamp stopped working after a year', answer: 'develops a defect within two years' },
  { question: 'can I call off my order', answer: 'An order can be cancelled free of charge', heldOut: true },
  { question: 'who pays to send it back', answer: 'the customer pays the return postage' },
  { question: 'can I return curtains made to my size', answer: 'cut to your measurements are made for you alone' },
  {
    question: 'my cat scratched the sofa, is that covered',
    answer: 'does not cover fabric wear, pet damage',
    heldOut: true,
  },
  { question: 'how much is shipping', answer: 'Standard delivery costs 4.95 euros for parcels' },
  { question: 'when is delivery free', answer: 'free on orders above 75 euros' },
  {
    question: 'what does next day delivery cost',
    answer: 'Express next-day delivery costs 12.50 euros',
    heldOut: true,
  },
  { question: 'what is the charge to build the furniture', answer: 'Assembly in your home costs 49 euros per item' },
  { question: 'will you take my old mattress away', answer: 'We take away and recycle your old sofa, mattress or bed' },
  {
    question: 'how expensive is the longer guarantee on a fridge',
    answer: 'cost 10 percent of its price',
    heldOut: true,
  },
  { question: 'is talking to a decorator free', answer: 'free with a purchase above 1,000 euros' },
  {
    question: 'can you hold my order until I move house',
    answer: 'keep an order in our warehouse for up to four weeks',
  },
  {
    question: 'can I use this software for free forever',
    answer: 'perpetual, worldwide, non-exclusive, no-charge, royalty-free',
    heldOut: true,
  },
  { question: 'can they sue me over patents', answer: 'shall terminate as of the date such litigation is filed' },
  {
    question: 'do I have to say that I edited the code',
    answer: 'carry prominent notices stating that You changed the files',
  },
  { question: 'can I use the company logo', answer: 'does not grant permission to use the trade names', heldOut: true },
  { question: 'is the software guaranteed to work', answer: 'WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND' },
  { question: 'who is responsible if it breaks my computer', answer: 'computer failure or malfunction' },
  { question: 'can I sell support for it', answer: 'charge a fee for, acceptance of support', heldOut: true },
  { question: 'what counts as owning a company', answer: 'fifty percent (50%) or more of the outstanding shares' },
  {
    question: 'if I send a fix upstream, what terms apply',
    answer: 'shall be under the terms and conditions of this License',
  },
  {
    question: 'what does the word you mean in this license',
    answer: 'exercising permissions granted by this License',
    heldOut: true,
  },
];
