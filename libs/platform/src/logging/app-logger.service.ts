import { Injectable } from '@nestjs/common';
import { Logger as NestPinoLogger } from 'nestjs-pino';

/** Nest's start-up narration: a line per module, controller and route, 100+ lines that say nothing went wrong. */
const BOOT_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/**
 * Nest's logger over pino, with Nest's start-up narration at debug: a boot prints a handful of lines (what it
 * listens on, what it consumes, anything that went wrong), and `LOG_LEVEL=debug` brings the rest back.
 */
@Injectable()
export class AppLogger extends NestPinoLogger {
  override log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    if (typeof context === 'string' && BOOT_CONTEXTS.has(context)) return super.debug(message, ...rest);
    super.log(message, ...rest);
  }
}
