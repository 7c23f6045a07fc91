import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
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
 * needed. pdftotext ends every page with a form feed. The process is killed when `timeoutMs` runs out.
 */
export function runPdftotext(bytes: Buffer, timeoutMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(EXECUTABLE_NAME, ['-q', '-enc', 'UTF-8', '-', '-'], { stdio: ['pipe', 'pipe', 'ignore'] });
    const output: Buffer[] = [];
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(processingTimeoutError(timeoutMs));
    }, timeoutMs);

    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new PdftotextFailure(`pdftotext could not be started: ${error.message}`));
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      if (exitCode === 0) resolve(splitPages(Buffer.concat(output).toString('utf8')));
      else reject(new PdftotextFailure(`pdftotext failed (exit code ${exitCode ?? signal})`));
    });
    // pdftotext may stop reading early on a broken file; the exit code reports that, not the broken pipe.
    child.stdin.on('error', () => undefined);
    child.stdin.end(bytes);
  });
}

function splitPages(output: string): string[] {
  const pages = output.split('\f');
  if (pages.length > 1 && pages[pages.length - 1].trim() === '') pages.pop();
  return pages;
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
