import type { FastifyInstance } from 'fastify';
import Router from 'find-my-way';

/**
 * The methods the app serves on each path, gathered from Fastify's routes as they are added, so the answer
 * always agrees with the routes. Used only for requests that matched no route, to tell a wrong method (405)
 * from an unknown path (404).
 */
export class AllowedMethods {
  private static readonly byApp = new WeakMap<FastifyInstance, AllowedMethods>();
  private readonly router: Router.Instance<Router.HTTPVersion.V1>;
  private readonly methodsByPattern = new Map<string, Set<string>>();

  /** Starts gathering the routes of `app`, matched as its own router matches them; call before any route is added. */
  static track(app: FastifyInstance, matching: Router.Config<Router.HTTPVersion.V1>): void {
    AllowedMethods.byApp.set(app, new AllowedMethods(app, matching));
  }

  static of(app: FastifyInstance): AllowedMethods | undefined {
    return AllowedMethods.byApp.get(app);
  }

  private constructor(app: FastifyInstance, matching: Router.Config<Router.HTTPVersion.V1>) {
    this.router = Router(matching);
    app.addHook('onRoute', ({ method, url }) => {
      // Catch-all routes (static assets, the not-found handler) say nothing about a path.
      if (url.includes('*')) return;
      let methods = this.methodsByPattern.get(url);
      if (!methods) {
        methods = new Set();
        this.methodsByPattern.set(url, methods);
        this.router.on('GET', url, () => undefined, methods);
      }
      for (const name of Array.isArray(method) ? method : [method]) methods.add(name.toUpperCase());
    });
  }

  /** The methods served at a concrete path (`/api/user/knowledgebases/7`), HEAD wherever GET is. */
  at(path: string): string[] {
    const found = this.router.find('GET', path.split('?')[0]);
    const methods = new Set<string>(found ? (found.store as Set<string>) : []);
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  }
}
