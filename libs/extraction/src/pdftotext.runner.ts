import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { processingTimeoutError } from './extraction.error';

const EXECUTABLE_NAME = 'pdftotext';

/** Why pdftotext produced no pages; the caller decides whether another extractor should try. */
export class PdftotextFailure extends Error {
  override readonly name = 'PdftotextFailure';
}

let cachedAvailability: boolean | undefined;

/** Whether poppler's pdftotext is installed; looked up on PATH once per process. */
export function isPdftotextAvailable(): boolean {
  cachedAvailability ??= findOnPath(EXECUTABLE_NAME) !== undefined;
  return cachedAvailability;
}

/**
 * Extracts the text of each page with pdftotext, feeding the PDF through stdin so no temporary file is
 * needed. pdftotext ends every page with a form feed; pages are cut off its output as it arrives, so the whole
 * output is never held as one buffer and one string besides the pages. The process is killed when `timeoutMs`
 * runs out.
 */
export function runPdftotext(bytes: Buffer, timeoutMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(EXECUTABLE_NAME, ['-q', '-enc', 'UTF-8', '-', '-'], { stdio: ['pipe', 'pipe', 'ignore'] });
    const pages: string[] = [];
    const decoder = new StringDecoder('utf8');
    let unfinishedPage = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(processingTimeoutError(timeoutMs));
    }, timeoutMs);

    child.stdout.on('data', (chunk: Buffer) => {
      const parts = (unfinishedPage + decoder.write(chunk)).split('\f');
      unfinishedPage = parts.pop()!;
      for (const part of parts) pages.push(part);
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new PdftotextFailure(`pdftotext could not be started: ${error.message}`));
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      if (exitCode !== 0) return reject(new PdftotextFailure(`pdftotext failed (exit code ${exitCode ?? signal})`));
      // What follows the last form feed is a page only if it has text (or if there was no form feed at all).
      const rest = unfinishedPage + decoder.end();
      if (pages.length === 0 || rest.trim() !== '') pages.push(rest);
      resolve(pages);
    });
    // pdftotext may stop reading early on a broken file; the exit code reports that, not the broken pipe.
    child.stdin.on('error', () => undefined);
    child.stdin.end(bytes);
  });
}

function findOnPath(executable: string): string | undefined {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, executable);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not in this directory; keep looking.
    }
  }
  return undefined;
}
