import { access, defineRoute } from '../../core/permissions.ts';
import type { JobsService } from './service.ts';
import { FailedJobList, FailedJobsQuery, RetryBody, RetryResult } from './schemas.ts';

const hub = { access: access.hubAdmin, tags: ['admin'] };

/** Failed inference jobs, hub admins only (src/modules/jobs/service.ts, docs/operations-jobs.md). */
export function jobsRoutes(jobs: JobsService) {
  return [
    defineRoute({
      ...hub,
      method: 'GET',
      url: '/admin/jobs/failed',
      action: 'jobs.failed.list',
      audit: [],
      summary:
        "Chunks whose inference job failed all its attempts and is not being re-driven, every team's, most recent failure first, with the error and the re-drives so far",
      schema: { querystring: FailedJobsQuery, response: { 200: FailedJobList } },
      handler: async ({ query }) => ({ jobs: await jobs.list(query.limit ?? 100) }),
    }),
    defineRoute({
      ...hub,
      method: 'POST',
      url: '/admin/jobs/failed/retry',
      action: 'jobs.failed.retry',
      audit: ['admin.jobs_retried'],
      summary:
        'Enqueues failed inference jobs again under new job ids: those of the chunk ids given (ids not failed are ignored), else every failed one; answers how many',
      schema: { body: RetryBody, response: { 200: RetryResult } },
      handler: async ({ actor, body }) => {
        const { retried } = await jobs.retry(actor, body?.chunkIds ?? null);
        return { retried };
      },
    }),
  ];
}
