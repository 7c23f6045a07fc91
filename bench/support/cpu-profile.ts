import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fixed, printTable } from './report';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface CostLine {
  name: string;
  /** Share of all samples, idle included. */
  share: number;
  /** Microseconds of CPU per request, when a request count is given. */
  microsecondsPerRequest?: number;
}

/** Where a frame's code lives: a package under node_modules, a project file, or Node itself. */
function origin(url: string): string {
  if (!url) return '(native)';
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1];
  if (url.startsWith('node:')) return 'node core';
  const project = /\/(apps|libs)\/.*$/.exec(url);
  return project ? `project ${project[0].slice(1)}` : url;
}

/**
 * The heaviest functions (self time) and packages of a `.cpuprofile` written by `node --cpu-prof`, with
 * `(idle)` left out of the lists but counted in the total, so shares are of the whole run.
 */
export function summariseProfile(
  path: string,
  requests?: number,
  top = 15,
): { functions: CostLine[]; packages: CostLine[]; callers: CostLine[]; busyShare: number } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  let totalUs = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
    totalUs += delta;
  });
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const frameName = ({ functionName, url, lineNumber }: ProfileNode['callFrame']) =>
    `${functionName || '(anonymous)'} ${url ? `${origin(url)}:${lineNumber + 1}` : ''}`.trim();
  /** The first frame up the stack that is neither Node's own code nor native: whose work a system call was. */
  const caller = (id: number): string | undefined => {
    for (let at = parents.get(id); at !== undefined; at = parents.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (frame.url && !frame.url.startsWith('node:')) return frameName(frame);
    }
    return undefined;
  };
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  const callers = new Map<string, number>();
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const name = frameName({ functionName, url, lineNumber });
    functions.set(name, (functions.get(name) ?? 0) + us);
    const by = !url || url.startsWith('node:') ? caller(id) : undefined;
    if (by) callers.set(`${name} < ${by}`, (callers.get(`${name} < ${by}`) ?? 0) + us);
    const group = ['(garbage collector)', '(program)'].includes(functionName) ? functionName : origin(url);
    packages.set(group, (packages.get(group) ?? 0) + us);
  }
  const lines = (costs: Map<string, number>) =>
    [...costs]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({
        name,
        share: us / totalUs,
        ...(requests ? { microsecondsPerRequest: us / requests } : {}),
      }));
  return {
    functions: lines(functions),
    packages: lines(packages),
    callers: lines(callers).slice(0, 8),
    busyShare: 1 - idleUs / totalUs,
  };
}

/** Prints the heaviest packages and functions of the one `.cpuprofile` in `directory`, per request answered. */
export function printProfile(directory: string, requests: number): void {
  const [file] = readdirSync(directory).filter((name) => name.endsWith('.cpuprofile'));
  const summary = summariseProfile(join(directory, file), requests);
  const table = (title: string, lines: CostLine[]) =>
    printTable(
      title,
      ['name', 'share of run', 'us/request'],
      lines.map((line) => [line.name, `${fixed(line.share * 100, 1)}%`, fixed(line.microsecondsPerRequest ?? 0, 1)]),
    );
  console.log(`\nAPI profile: busy ${fixed(summary.busyShare * 100, 0)}% of the run (${join(directory, file)})`);
  table('API self time by package', summary.packages);
  table('API self time by function', summary.functions);
  table("API self time of Node's own and native code, by the first caller outside it", summary.callers);
}
