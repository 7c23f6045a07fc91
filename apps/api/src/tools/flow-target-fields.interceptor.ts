import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { Errors } from '@app/contracts';
import { InjectTenantRepository, TenantRepository, Tool } from '@app/database';
import { ResourceIdPipe } from '@app/platform';
import type { AuthenticatedRequest } from '../auth/auth-context';

/** What an automation-platform flow decides for a tool linked to it. */
const FLOW_TARGET_FIELDS = ['endpoint', 'method', 'body_format'] as const;
const toolId = new ResourceIdPipe(Errors.toolNotFound);

/**
 * The spec: on update, "for a tool linked to an automation-platform flow, `endpoint`, `method`, `body_format` are
 * ignored". Ignored means neither applied nor validated (Laravel's `exclude_if`), so they are dropped from the body
 * before validation runs. Looks the tool up only when the body carries one of them.
 */
@Injectable()
export class FlowTargetFieldsInterceptor implements NestInterceptor {
  constructor(@InjectTenantRepository(Tool) private readonly tools: TenantRepository<Tool>) {}

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const body = request.body as Record<string, unknown> | undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return next.handle();
    if (!FLOW_TARGET_FIELDS.some((field) => Object.hasOwn(body, field))) return next.handle();
    let id: number;
    try {
      id = toolId.transform(String(request.params.id));
    } catch {
      return next.handle(); // the route's own pipe answers the missing tool
    }
    const tool = await this.tools.findOne(request.auth!.user.id, id);
    if (tool?.automationFlowId != null) for (const field of FLOW_TARGET_FIELDS) delete body[field];
    return next.handle();
  }
}
