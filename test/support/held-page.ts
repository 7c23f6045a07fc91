import type { RouteHandler } from '../../libs/outbound-http/test/local-site';
import { waitFor } from './wait-for';

/** A page that is requested but not answered until released: it holds a crawl, and so its job, mid-way. */
export class HeldPage {
  /** How many times the page has been requested. */
  requests = 0;
  private readonly gate: Promise<void>;
  private open: () => void = () => undefined;

  constructor(private readonly html: string) {
    this.gate = new Promise<void>((resolve) => (this.open = resolve));
  }

  readonly handler: RouteHandler = async (_request, response) => {
    this.requests++;
    await this.gate;
    response.writeHead(200, { 'Content-Type': 'text/html' }).end(this.html);
  };

  /** Resolves once a crawler is waiting on the page. */
  requested(): Promise<boolean> {
    return waitFor(async () => (this.requests > 0 ? true : undefined), 60_000);
  }

  release(): void {
    this.open();
  }
}
