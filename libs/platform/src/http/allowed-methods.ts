import type { Express } from 'express';

interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
  match(path: string): boolean;
}

/**
 * The methods the app serves on a path, read from Express's own router so the answer always agrees with the
 * routes. Used only for requests that matched no route, to tell a wrong method (405) from an unknown path (404).
 */
export function allowedMethods(app: Express, path: string): string[] {
  const stack = (app as unknown as { router?: { stack: RouteLayer[] } }).router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    // Catch-all routes (Nest's own not-found handler, `app.all`) say nothing about this path.
    if (!layer.route || layer.route.methods._all || layer.route.path.includes('*') || !layer.match(path)) continue;
    for (const [method, enabled] of Object.entries(layer.route.methods)) {
      if (enabled) methods.add(method.toUpperCase());
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
