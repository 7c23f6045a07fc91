import { readFileSync } from 'node:fs';

/** One variable of an `.env.example`: its name, its value, and the comment line above it. */
export interface TemplateVariable {
  name: string;
  value: string;
  comment: string | undefined;
}

/** The variables an `.env.example` sets, in order, each with the comment line right above it (if any). */
export function readEnvTemplate(path: string): TemplateVariable[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  return lines.flatMap((line, index) => {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!match) return [];
    const above = lines[index - 1];
    return [{ name: match[1], value: match[2], comment: above?.startsWith('# ') ? above.slice(2) : undefined }];
  });
}

/** The lines that are neither a variable, a comment nor blank: a typo such as `export X=1` or `X =1`. */
export function strayTemplateLines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#') && !/^[A-Z][A-Z0-9_]*=/.test(line));
}
