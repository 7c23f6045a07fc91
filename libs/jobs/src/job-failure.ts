/**
 * Why a job ended failed, as the queue dashboard and the worker's "job finished" line show it to operators, who see
 * every account's jobs: a class of failure from the fixed vocabulary below, with a number at most (a status code,
 * seconds, attempts). Never a URL, a file name, a provider's message, an error's text or anything else an account
 * supplied or a secret could hide in; those stay with what the job worked on (a document's error message, a
 * trunk's error), which its owner reads and which this does not change.
 */
export type FailureReason = string & { readonly __failureReason: true };

const reason = (text: string) => text as FailureReason;
const whole = (value: number) => Math.max(0, Math.round(value));

export const FailureReasons = {
  // Files (documents)
  contentMismatch: reason('content does not match the declared type'),
  corruptFile: reason('file is corrupt'),
  noText: reason('no text to extract'),
  tooLarge: reason('too large to process'),
  unsupportedFile: reason('unsupported file (password-protected or of an unknown type)'),
  fileGone: reason('uploaded file no longer stored'),
  // Crawls (website documents and their refreshes)
  notPublicAddress: reason('crawl refused: not a public address'),
  invalidUrl: reason('crawl refused: invalid URL'),
  unsupportedProtocol: reason('crawl refused: not an http or https URL'),
  disallowedByRobots: reason('crawl refused: disallowed by robots.txt'),
  redirectRefused: reason('crawl refused: a redirect off the site'),
  tooManyRedirects: reason('crawl failed: too many redirects'),
  unreachable: reason('crawl failed: site unreachable'),
  tlsFailed: reason('crawl failed: TLS handshake or certificate refused'),
  pageTimedOut: reason('crawl failed: the page did not answer in time'),
  notAPage: reason('crawl failed: neither HTML nor text'),
  siteAnswered: (status: number) => reason(`crawl failed: site answered HTTP ${whole(status)}`),
  // Telephony and the dialer
  numberTakenAtProvider: reason('provider refused: conflicting number'),
  numberHeldByAnotherTrunk: reason('number held by another trunk'),
  providerRefused: reason('provider refused or unreachable'),
  trunkGone: reason('trunk deleted meanwhile'),
  assistantGone: reason('assistant deleted before the dial'),
  noOutboundTrunk: reason('caller number has no outbound trunk'),
  // Lead imports
  notCsv: reason('not valid CSV'),
  noPhoneColumn: reason('no phone_number column'),
  // Post-call analysis
  modelRefusedRequest: (status: number | undefined) =>
    reason(`model provider refused the request${status === undefined ? '' : `: HTTP ${whole(status)}`}`),
  modelUnavailable: reason('model provider unavailable'),
  invalidAnalysis: reason('the model gave no valid analysis'),
  // Any job
  timeout: (seconds: number) => reason(`timeout after ${whole(seconds)} s`),
  /** The last attempt's class when retries ran out. */
  afterAttempts: (attempts: number, last: FailureReason) =>
    reason(`gave up after ${whole(attempts)} attempts: ${last}`),
  /** A failure no class above covers: only the error's class name, which the code chose, never its message. */
  unexpected: (error: unknown) =>
    reason(`unexpected ${error instanceof Error && /^\w{1,64}$/.test(error.name) ? error.name : 'error'}`),
} as const;
