/**
 * The console API's request bodies, checked: what the server passes to the backend is typed and
 * valid, or the request fails with a 400 {@link ConsoleRequestError} naming the field.
 */
import type { Context } from 'hono';
import type { DeadLetterFilter } from '../ops/filters.ts';
import { ConsoleRequestError } from './backend/errors.ts';
import type { JobLookup } from './jobs.ts';

function list(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new ConsoleRequestError(400, 'filter values must be lists of strings');
  }
  return value.filter((v) => v !== '');
}

/** A dead-letter filter from a request body (absent: select everything). */
export function filterOf(value: unknown): DeadLetterFilter {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object') throw new ConsoleRequestError(400, 'filter must be an object');
  const f = value as Record<string, unknown>;
  const known = new Set(['jobTypes', 'reasons', 'errorNames', 'jobIds']);
  for (const key of Object.keys(f)) {
    if (!known.has(key)) throw new ConsoleRequestError(400, `unknown filter field "${key}"`);
  }
  return {
    jobTypes: list(f.jobTypes),
    reasons: list(f.reasons),
    errorNames: list(f.errorNames),
    jobIds: list(f.jobIds),
  };
}

/** A job lookup from a request body: `type` and optional `key`, `source`, `id`, `steps` (strings or a list). */
export function jobLookupOf(body: Record<string, unknown>): JobLookup {
  const text = (name: string): string | undefined => {
    const value = body[name];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw new ConsoleRequestError(400, `${name} must be a string`);
    return value;
  };
  const given = body.steps;
  let steps: string[] | undefined;
  if (typeof given === 'string') steps = given.split(',');
  else if (Array.isArray(given) && given.every((s) => typeof s === 'string')) steps = given;
  else if (given !== undefined && given !== null) {
    throw new ConsoleRequestError(400, 'steps must be a list of step names');
  }
  steps = steps?.map((s) => s.trim()).filter((s) => s !== '');
  const key = text('key');
  const source = text('source');
  const id = text('id');
  return {
    type: text('type') ?? '',
    ...(key === undefined ? {} : { key }),
    ...(source === undefined ? {} : { source }),
    ...(id === undefined ? {} : { id }),
    ...(steps === undefined ? {} : { steps }),
  };
}

/** The request's JSON object body. */
export async function readJson(c: Context): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw new ConsoleRequestError(400, 'the body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ConsoleRequestError(400, 'the body must be a JSON object');
  }
  return body as Record<string, unknown>;
}
