import { setTimeout as sleep } from 'node:timers/promises';
import { Body, Controller, Get, Module, Post, Query, Req } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import type { Request } from 'express';
import { Repository } from 'typeorm';
import { AppConfig } from '@app/config';
import { PageQuery, Rule, lengthAwarePage, slimPage, toLanguageResponse } from '@app/contracts';
import { Language } from '@app/database';
import { Public, pageLocation } from '@app/platform';

/** Requests to `slow` that have reached its handler: a test closes the app once its request is in flight, not before. */
export const slowRequests = { started: 0 };

class NestedItem {
  @Rule.Required()
  @Rule.String()
  @Rule.MaxChars(5)
  name: string;
}

class NestedRequest {
  @Rule.Required()
  @Rule.EachNested(() => NestedItem)
  items: NestedItem[];

  @Rule.Optional()
  @Rule.Integer()
  @Rule.Between(1, 30)
  timeout?: number;
}

/**
 * Routes that exist only in tests: they drive the shared pagination helper, validation and error handling
 * through the real HTTP stack, over a real table.
 */
// Test-only routes stay out of the public document (and so out of the conformance check).
@ApiExcludeController()
@Controller('test')
class TestRoutesController {
  constructor(
    private readonly config: AppConfig,
    @InjectRepository(Language) private readonly languages: Repository<Language>,
  ) {}

  @Get('pages/full')
  async full(@Query() query: PageQuery, @Req() request: Request) {
    const [rows, total] = await this.languages.findAndCount({
      order: { id: 'ASC' },
      skip: (query.page - 1) * query.per_page,
      take: query.per_page,
    });
    return lengthAwarePage(
      rows.map(toLanguageResponse),
      total,
      { page: query.page, perPage: query.per_page },
      pageLocation(request, this.config.appUrl),
    );
  }

  @Get('pages/slim')
  async slim(@Query() query: PageQuery) {
    const [rows, total] = await this.languages.findAndCount({
      order: { id: 'ASC' },
      skip: (query.page - 1) * query.per_page,
      take: query.per_page,
    });
    return slimPage(rows.map(toLanguageResponse), total, { page: query.page, perPage: query.per_page });
  }

  @Post('nested')
  nested(@Body() body: NestedRequest) {
    return body;
  }

  @Public()
  @Get('slow')
  async slow() {
    slowRequests.started += 1;
    await sleep(400);
    return { done: true };
  }

  @Get('boom')
  boom(): never {
    throw new Error('connection string postgres://secret@db');
  }
}

@Module({ imports: [TypeOrmModule.forFeature([Language])], controllers: [TestRoutesController] })
export class TestRoutesModule {}
