/**
 * The console's JSON API: each route checks its request (lib/console/requests.ts) and calls the
 * backend's method for its page (lib/console/backend.ts). The answers are the backend's views as
 * they are; lib/console/page/api.js is the page's side of the same list.
 */
import type { Env, Hono } from 'hono';
import { ConsoleRequestError } from './backend/errors.ts';
import type { ConsoleBackend } from './backend.ts';
import { filterOf, jobLookupOf, readJson } from './requests.ts';

/** Adds the `/api/` routes to `app` (its middleware has already checked the caller). */
export function addApiRoutes<E extends Env>(app: Hono<E>, backend: ConsoleBackend): void {
  // GETs: what is in memory, nothing sent to a queue.
  app.get('/api/config', (c) => c.json(backend.config()));
  app.get('/api/queues', async (c) => c.json(await backend.queues(Number(c.req.query('since') ?? 0) || 0)));
  // Reads of the Scheduler and the table (Scans): nothing sent, nothing held.
  app.get('/api/schedules', async (c) => c.json(await backend.schedules()));
  app.get('/api/limits', async (c) => c.json(await backend.limits()));

  // POSTs: anything that receives from a queue (reads hold messages and raise receive counts).
  app.post('/api/queues/:id/dead-letters', async (c) => {
    const body = await readJson(c);
    if (body.refresh !== undefined && typeof body.refresh !== 'boolean') {
      throw new ConsoleRequestError(400, 'refresh must be true or false');
    }
    return c.json(await backend.deadLetters(c.req.param('id'), { refresh: body.refresh === true }));
  });
  app.post('/api/queues/:id/dead-letters/:messageId', async (c) => {
    await readJson(c);
    return c.json(await backend.message(c.req.param('id'), c.req.param('messageId')));
  });
  app.post('/api/queues/:id/redrive', async (c) => {
    const body = await readJson(c);
    if (typeof body.dryRun !== 'boolean') throw new ConsoleRequestError(400, 'dryRun must be true or false');
    if (body.planId !== undefined && typeof body.planId !== 'string') {
      throw new ConsoleRequestError(400, 'planId must be a string');
    }
    return c.json(
      await backend.redrive(c.req.param('id'), {
        dryRun: body.dryRun,
        filter: filterOf(body.filter),
        ...(typeof body.planId === 'string' ? { planId: body.planId } : {}),
      }),
    );
  });
  app.post('/api/redrives/:id/verify', async (c) => {
    await readJson(c);
    return c.json(await backend.verify(c.req.param('id')));
  });
  app.post('/api/schedules/cancel', async (c) => {
    const body = await readJson(c);
    if (typeof body.jobId !== 'string' || body.jobId === '')
      throw new ConsoleRequestError(400, 'jobId must be the id of a job sent for later');
    if (body.source !== undefined && typeof body.source !== 'string')
      throw new ConsoleRequestError(400, 'source must be a string');
    return c.json(
      await backend.cancelScheduledJob({
        jobId: body.jobId,
        ...(typeof body.source === 'string' && body.source !== '' ? { source: body.source } : {}),
      }),
    );
  });
  app.post('/api/schedules/fire', async (c) => {
    const body = await readJson(c);
    if (
      typeof body.name !== 'string' ||
      body.name === '' ||
      typeof body.group !== 'string' ||
      body.group === ''
    )
      throw new ConsoleRequestError(400, 'name and group must name a recurring schedule');
    return c.json(await backend.fireSchedule({ name: body.name, group: body.group }));
  });
  app.post('/api/jobs', async (c) => c.json(await backend.job(jobLookupOf(await readJson(c)))));
}
