import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import {
  childJobId,
  createEnvelope,
  DATA_CONTENT_TYPE,
  deduplicationIdOf,
  EnvelopeError,
  type JobEnvelope,
  parseEnvelope,
  SPEC_VERSION,
} from '../../lib/core/envelope.ts';

const schemaPath = new URL('../../lib/core/envelope.schema.json', import.meta.url);
const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<string, unknown>;
// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = addFormatsPlugin as unknown as typeof addFormatsPlugin.default;
const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const validateWithSchema = ajv.compile(schema);

const valid = {
  specversion: '1.0',
  id: 'c0a80101-0000-4000-8000-000000000001',
  source: '/services/checkout',
  type: 'booking.reserve-inventory',
  time: '2026-11-29T07:00:00.000Z',
  datacontenttype: 'application/json',
  data: { bookingId: 'b-1' },
} as const;

function without(field: keyof typeof valid): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...valid };
  delete copy[field];
  return copy;
}

/** The W3C Trace Context example traceparent. */
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';

const emoji = '\u{1F600}'; // one code point, two UTF-16 code units

interface Case {
  readonly name: string;
  /** The parsed JSON value of the body. */
  readonly value: unknown;
  /** The field an invalid case must be rejected for (`EnvelopeError.field`); undefined = valid. */
  readonly field?: string;
}

const cases: readonly Case[] = [
  // valid
  { name: 'all required attributes', value: valid },
  { name: 'with partitionkey', value: { ...valid, partitionkey: 'user-42' } },
  { name: 'data null', value: { ...valid, data: null } },
  { name: 'data an array', value: { ...valid, data: ['a', 'b'] } },
  { name: 'data a string', value: { ...valid, data: 'b-1' } },
  { name: 'an unknown extension attribute', value: { ...valid, myextension: 'anything' } },
  { name: 'extension name of 20 chars', value: { ...valid, abcdefghij0123456789: 'x' } },
  { name: 'time lowercase t and z', value: { ...valid, time: '2026-11-29t07:00:00z' } },
  { name: 'time with offset', value: { ...valid, time: '2026-11-29T12:30:00+05:30' } },
  { name: 'time with negative offset', value: { ...valid, time: '2026-11-29T01:00:00-08:00' } },
  { name: 'time with nanoseconds', value: { ...valid, time: '2026-11-29T07:00:00.123456789Z' } },
  { name: 'time 29 Feb of a leap year', value: { ...valid, time: '2024-02-29T00:00:00Z' } },
  { name: 'time 23:59:59', value: { ...valid, time: '2026-12-31T23:59:59Z' } },
  { name: 'id of 256 chars', value: { ...valid, id: 'x'.repeat(256) } },
  { name: 'id of 256 code points (astral)', value: { ...valid, id: emoji.repeat(256) } },
  { name: 'id of one space', value: { ...valid, id: ' ' } },
  { name: 'partitionkey of 128 chars', value: { ...valid, partitionkey: 'p'.repeat(128) } },
  // invalid: not an object
  { name: 'an array', value: [valid], field: 'body' },
  { name: 'a string', value: 'job', field: 'body' },
  { name: 'null', value: null, field: 'body' },
  { name: 'a number', value: 1, field: 'body' },
  // specversion
  { name: 'specversion missing', value: without('specversion'), field: 'specversion' },
  { name: 'specversion 0.3', value: { ...valid, specversion: '0.3' }, field: 'specversion' },
  { name: 'specversion a number', value: { ...valid, specversion: 1.0 }, field: 'specversion' },
  // id
  { name: 'id missing', value: without('id'), field: 'id' },
  { name: 'id empty', value: { ...valid, id: '' }, field: 'id' },
  { name: 'id of 257 chars', value: { ...valid, id: 'x'.repeat(257) }, field: 'id' },
  { name: 'id of 257 code points', value: { ...valid, id: emoji.repeat(257) }, field: 'id' },
  { name: 'id a number', value: { ...valid, id: 7 }, field: 'id' },
  // source, type
  { name: 'source missing', value: without('source'), field: 'source' },
  { name: 'source empty', value: { ...valid, source: '' }, field: 'source' },
  { name: 'type missing', value: without('type'), field: 'type' },
  { name: 'type empty', value: { ...valid, type: '' }, field: 'type' },
  { name: 'type an object', value: { ...valid, type: { name: 'x' } }, field: 'type' },
  // time
  { name: 'time missing', value: without('time'), field: 'time' },
  { name: 'time not a date', value: { ...valid, time: 'yesterday' }, field: 'time' },
  { name: 'time date only', value: { ...valid, time: '2026-11-29' }, field: 'time' },
  { name: 'time without offset', value: { ...valid, time: '2026-11-29T07:00:00' }, field: 'time' },
  { name: 'time with a space separator', value: { ...valid, time: '2026-11-29 07:00:00Z' }, field: 'time' },
  { name: 'time epoch number', value: { ...valid, time: 1_795_000_000 }, field: 'time' },
  { name: 'time 30 Feb', value: { ...valid, time: '2026-02-30T00:00:00Z' }, field: 'time' },
  { name: 'time 29 Feb of a common year', value: { ...valid, time: '2026-02-29T00:00:00Z' }, field: 'time' },
  { name: 'time 31 April', value: { ...valid, time: '2026-04-31T00:00:00Z' }, field: 'time' },
  { name: 'time month 13', value: { ...valid, time: '2026-13-01T00:00:00Z' }, field: 'time' },
  { name: 'time hour 24', value: { ...valid, time: '2026-11-29T24:00:00Z' }, field: 'time' },
  { name: 'time hour 24 with offset', value: { ...valid, time: '2026-11-29T24:59:30+01:00' }, field: 'time' },
  { name: 'time minute 60', value: { ...valid, time: '2026-11-29T07:60:00Z' }, field: 'time' },
  { name: 'time leap second', value: { ...valid, time: '2026-12-31T23:59:60Z' }, field: 'time' },
  { name: 'time offset +24:00', value: { ...valid, time: '2026-11-29T07:00:00+24:00' }, field: 'time' },
  { name: 'time offset without colon', value: { ...valid, time: '2026-11-29T07:00:00+0100' }, field: 'time' },
  // datacontenttype
  { name: 'datacontenttype missing', value: without('datacontenttype'), field: 'datacontenttype' },
  {
    name: 'datacontenttype text/plain',
    value: { ...valid, datacontenttype: 'text/plain' },
    field: 'datacontenttype',
  },
  // data
  { name: 'data missing', value: without('data'), field: 'data' },
  // partitionkey
  { name: 'partitionkey empty', value: { ...valid, partitionkey: '' }, field: 'partitionkey' },
  {
    name: 'partitionkey of 129 chars',
    value: { ...valid, partitionkey: 'p'.repeat(129) },
    field: 'partitionkey',
  },
  // partitionkey becomes a MessageGroupId: printable ASCII without space, whatever the queue
  {
    name: 'partitionkey of 128 code points (astral)',
    value: { ...valid, partitionkey: emoji.repeat(128) },
    field: 'partitionkey',
  },
  {
    name: 'partitionkey with a non-ASCII letter',
    value: { ...valid, partitionkey: 'joão' },
    field: 'partitionkey',
  },
  { name: 'partitionkey with a space', value: { ...valid, partitionkey: 'user 9' }, field: 'partitionkey' },
  { name: 'partitionkey a tab', value: { ...valid, partitionkey: '\t' }, field: 'partitionkey' },
  { name: 'partitionkey with DEL', value: { ...valid, partitionkey: 'a\u007f' }, field: 'partitionkey' },
  {
    name: 'partitionkey of all punctuation',
    value: { ...valid, partitionkey: '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~' },
  },
  { name: 'partitionkey null', value: { ...valid, partitionkey: null }, field: 'partitionkey' },
  { name: 'partitionkey a number', value: { ...valid, partitionkey: 42 }, field: 'partitionkey' },
  // lineage (Correlation extension + chain attributes)
  {
    name: 'with correlationid, causationid, rootid and parentjob',
    value: {
      ...valid,
      correlationid: 'order-42',
      causationid: 'c0a80101-0000-4000-8000-000000000000',
      rootid: 'book-1',
      parentjob: 'booking.reserve-inventory#/services/checkout\nbook-1',
    },
  },
  { name: 'correlationid of 256 chars', value: { ...valid, correlationid: 'c'.repeat(256) } },
  { name: 'correlationid empty', value: { ...valid, correlationid: '' }, field: 'correlationid' },
  {
    name: 'correlationid of 257 chars',
    value: { ...valid, correlationid: 'c'.repeat(257) },
    field: 'correlationid',
  },
  { name: 'correlationid a number', value: { ...valid, correlationid: 42 }, field: 'correlationid' },
  { name: 'causationid empty', value: { ...valid, causationid: '' }, field: 'causationid' },
  { name: 'causationid null', value: { ...valid, causationid: null }, field: 'causationid' },
  { name: 'rootid of 257 chars', value: { ...valid, rootid: 'r'.repeat(257) }, field: 'rootid' },
  { name: 'parentjob of 2048 chars', value: { ...valid, parentjob: 'p'.repeat(2048) } },
  { name: 'parentjob of 2049 chars', value: { ...valid, parentjob: 'p'.repeat(2049) }, field: 'parentjob' },
  { name: 'parentjob an object', value: { ...valid, parentjob: { type: 'x' } }, field: 'parentjob' },
  { name: 'batch attributes', value: { ...valid, batchid: 'b-1', completesbatch: 'b-2', batchwatch: 'b-3' } },
  { name: 'batchid of 129 chars', value: { ...valid, batchid: 'b'.repeat(129) }, field: 'batchid' },
  { name: 'completesbatch empty', value: { ...valid, completesbatch: '' }, field: 'completesbatch' },
  { name: 'batchwatch a number', value: { ...valid, batchwatch: 7 }, field: 'batchwatch' },
  // trace context (Distributed Tracing extension, W3C Trace Context)
  { name: 'traceparent', value: { ...valid, traceparent: TRACEPARENT } },
  { name: 'traceparent sampled', value: { ...valid, traceparent: `${TRACEPARENT.slice(0, -2)}01` } },
  {
    name: 'traceparent and tracestate',
    value: { ...valid, traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' },
  },
  {
    name: 'tracestate of 512 chars',
    value: { ...valid, traceparent: TRACEPARENT, tracestate: `a=${'x'.repeat(510)}` },
  },
  {
    name: 'traceparent of a later version with more fields',
    value: { ...valid, traceparent: `01${TRACEPARENT.slice(2)}-what-comes-next` },
  },
  {
    name: 'traceparent of a later version, 55 chars',
    value: { ...valid, traceparent: `cc${TRACEPARENT.slice(2)}` },
  },
  { name: 'traceparent too short', value: { ...valid, traceparent: '00-abc-01' }, field: 'traceparent' },
  { name: 'traceparent empty', value: { ...valid, traceparent: '' }, field: 'traceparent' },
  {
    name: 'traceparent uppercase hex',
    value: { ...valid, traceparent: TRACEPARENT.toUpperCase() },
    field: 'traceparent',
  },
  {
    name: 'traceparent all-zero trace id',
    value: { ...valid, traceparent: `00-${'0'.repeat(32)}-b7ad6b7169203331-01` },
    field: 'traceparent',
  },
  {
    name: 'traceparent all-zero parent id',
    value: { ...valid, traceparent: `00-0af7651916cd43dd8448eb211c80319c-${'0'.repeat(16)}-01` },
    field: 'traceparent',
  },
  {
    name: 'traceparent version ff',
    value: { ...valid, traceparent: `ff${TRACEPARENT.slice(2)}` },
    field: 'traceparent',
  },
  {
    name: 'traceparent version 00 with more after it',
    value: { ...valid, traceparent: `${TRACEPARENT}-01` },
    field: 'traceparent',
  },
  {
    name: 'traceparent of a later version followed by no dash',
    value: { ...valid, traceparent: `01${TRACEPARENT.slice(2)}x` },
    field: 'traceparent',
  },
  {
    name: 'traceparent with a wrong separator',
    value: { ...valid, traceparent: TRACEPARENT.replace(/-/g, '_') },
    field: 'traceparent',
  },
  {
    name: 'traceparent flags not hex',
    value: { ...valid, traceparent: `${TRACEPARENT.slice(0, -2)}0g` },
    field: 'traceparent',
  },
  {
    name: 'traceparent with a space',
    value: { ...valid, traceparent: ` ${TRACEPARENT}` },
    field: 'traceparent',
  },
  { name: 'traceparent a number', value: { ...valid, traceparent: 7 }, field: 'traceparent' },
  { name: 'tracestate without traceparent', value: { ...valid, tracestate: 'rojo=1' }, field: 'tracestate' },
  {
    name: 'tracestate of 513 chars',
    value: { ...valid, traceparent: TRACEPARENT, tracestate: `a=${'x'.repeat(511)}` },
    field: 'tracestate',
  },
  {
    name: 'tracestate with a newline',
    value: { ...valid, traceparent: TRACEPARENT, tracestate: 'a=1\nb=2' },
    field: 'tracestate',
  },
  {
    name: 'tracestate empty',
    value: { ...valid, traceparent: TRACEPARENT, tracestate: '' },
    field: 'tracestate',
  },
  // a job sent for later
  {
    name: 'runat with schedulegeneration',
    value: { ...valid, runat: '2026-12-24T18:00:00.000Z', schedulegeneration: '1' },
  },
  {
    name: 'runat with a 15-digit schedulegeneration',
    value: { ...valid, runat: '2026-12-24T18:00:00Z', schedulegeneration: '999999999999999' },
  },
  {
    name: 'runat without schedulegeneration',
    value: { ...valid, runat: '2026-12-24T18:00:00Z' },
    field: 'schedulegeneration',
  },
  { name: 'schedulegeneration without runat', value: { ...valid, schedulegeneration: '1' }, field: 'runat' },
  {
    name: 'runat not a time',
    value: { ...valid, runat: 'tomorrow', schedulegeneration: '1' },
    field: 'runat',
  },
  {
    name: 'schedulegeneration 0',
    value: { ...valid, runat: '2026-12-24T18:00:00Z', schedulegeneration: '0' },
    field: 'schedulegeneration',
  },
  {
    name: 'schedulegeneration a number',
    value: { ...valid, runat: '2026-12-24T18:00:00Z', schedulegeneration: 1 },
    field: 'schedulegeneration',
  },
  // extension attribute names
  { name: 'extension name in camelCase', value: { ...valid, traceParent: 'x' }, field: 'traceParent' },
  { name: 'extension name with underscore', value: { ...valid, trace_parent: 'x' }, field: 'trace_parent' },
  {
    name: 'extension name of 21 chars',
    value: { ...valid, abcdefghij0123456789x: 'x' },
    field: 'abcdefghij0123456789x',
  },
  {
    name: 'extension name __proto__',
    value: JSON.parse(`{"__proto__": 1, "specversion": "1.0"}`),
    field: '',
  },
];

function parserAccepts(value: unknown): boolean {
  try {
    parseEnvelope(JSON.stringify(value));
    return true;
  } catch (err) {
    if (!(err instanceof EnvelopeError)) throw err;
    return false;
  }
}

describe('envelope JSON Schema and parseEnvelope agree', () => {
  it.each(cases)('$name', ({ value, field }) => {
    const schemaAccepts = validateWithSchema(value);
    const accepts = parserAccepts(value);
    expect({ schema: schemaAccepts, parser: accepts }).toEqual({
      schema: field === undefined,
      parser: field === undefined,
    });
  });

  it('is a draft 2020-12 schema that requires every CloudEvents attribute the parser requires', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.required).toEqual([
      'specversion',
      'id',
      'source',
      'type',
      'time',
      'datacontenttype',
      'data',
    ]);
  });
});

describe('parseEnvelope', () => {
  const invalid = cases.filter((c) => c.field !== undefined && c.field !== '');

  it.each(invalid)('names the field at fault: $name', ({ value, field }) => {
    let caught: unknown;
    try {
      parseEnvelope(JSON.stringify(value));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(EnvelopeError);
    const error = caught as EnvelopeError;
    expect(error.field).toBe(field);
    expect(error.message).toContain(`invalid job envelope: ${field} `);
    expect(error.context).toEqual({ field });
  });

  it.each([
    ['not JSON at all', 'not json'],
    ['truncated JSON', '{"specversion":"1.0",'],
    ['an empty body', ''],
  ])('rejects %s as field "body"', (_name, body) => {
    expect(() => parseEnvelope(body)).toThrow(expect.objectContaining({ field: 'body' }));
    expect(() => parseEnvelope(body)).toThrow(/invalid job envelope: body is not JSON/);
  });

  it('names valid JSON too deep to parse as such, not as bad JSON', () => {
    // A one-character escaped key takes the reviver path of parseJsonText, which recurses.
    const depth = 200_000;
    const data = `${'{"\\n":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const { data: _data, ...head } = valid;
    const body = `${JSON.stringify(head).slice(0, -1)},"data":${data}}`;
    expect(() => parseEnvelope(body)).toThrow(
      expect.objectContaining({
        field: 'body',
        message: expect.stringMatching(
          /^invalid job envelope: body could not be parsed \(Maximum call stack size exceeded\)/,
        ),
      }),
    );
  });

  it('says what was wrong, not only where', () => {
    expect(() => parseEnvelope(JSON.stringify({ ...valid, specversion: '0.3' }))).toThrow(
      'invalid job envelope: specversion must be "1.0", got "0.3"',
    );
    expect(() => parseEnvelope(JSON.stringify({ ...valid, id: 7 }))).toThrow(
      'invalid job envelope: id must be a string, got number',
    );
    expect(() => parseEnvelope(JSON.stringify({ ...valid, id: 'x'.repeat(257) }))).toThrow(
      'invalid job envelope: id must be at most 256 characters',
    );
    expect(() => parseEnvelope(JSON.stringify({ ...valid, time: '2026-02-30T00:00:00Z' }))).toThrow(
      'invalid job envelope: time must be an RFC 3339 timestamp, got "2026-02-30T00:00:00Z"',
    );
  });

  it('returns the CloudEvents attributes and leaves unknown extensions out', () => {
    const envelope = parseEnvelope(JSON.stringify({ ...valid, partitionkey: 'user-1', myextension: 't' }));
    expect(envelope).toEqual({ ...valid, partitionkey: 'user-1' });
    expect(envelope).not.toHaveProperty('myextension');
  });

  it('returns the lineage and trace attributes it knows', () => {
    const lineage = {
      correlationid: 'order-42',
      causationid: 'parent-1',
      rootid: 'root-1',
      parentjob: 'a.b#/s\nparent-1',
      traceparent: TRACEPARENT,
      tracestate: 'rojo=1',
    };
    expect(parseEnvelope(JSON.stringify({ ...valid, ...lineage }))).toEqual({ ...valid, ...lineage });
  });

  it('says what is wrong with a traceparent', () => {
    const problem = (traceparent: string) => () => parseEnvelope(JSON.stringify({ ...valid, traceparent }));
    expect(problem('00-abc-01')).toThrow(
      /traceparent must be a W3C traceparent: version-traceid-parentid-flags, 2-32-16-2 lowercase hex digits .*got "00-abc-01"/,
    );
    expect(problem(TRACEPARENT.toUpperCase())).toThrow(
      /the version is not 2 lowercase hex digits|trace id is not 32 lowercase hex/,
    );
    expect(problem(`00-${'0'.repeat(32)}-b7ad6b7169203331-01`)).toThrow('an all-zero trace id is invalid');
    expect(problem(`00-0af7651916cd43dd8448eb211c80319c-${'0'.repeat(16)}-01`)).toThrow(
      'an all-zero parent id is invalid',
    );
    expect(problem(`ff${TRACEPARENT.slice(2)}`)).toThrow('version ff is invalid');
    expect(problem(`${TRACEPARENT}-x`)).toThrow('version 00 has exactly 55 characters, got 57');
  });

  it('keeps data null as null (present, not missing)', () => {
    expect(parseEnvelope(JSON.stringify({ ...valid, data: null })).data).toBeNull();
  });
});

describe('createEnvelope', () => {
  it('fills id (UUID v4), time (now, RFC 3339) and the constant attributes', () => {
    const before = Date.now();
    const envelope = createEnvelope({
      type: 'payments.capture',
      source: '/checkout',
      data: { paymentId: 'p' },
    });
    expect(envelope.specversion).toBe(SPEC_VERSION);
    expect(envelope.datacontenttype).toBe(DATA_CONTENT_TYPE);
    expect(envelope.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Date.parse(envelope.time)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(envelope.time)).toBeLessThanOrEqual(Date.now());
    expect(envelope).not.toHaveProperty('partitionkey');
  });

  it('round-trips through JSON and parseEnvelope unchanged', () => {
    const envelope = createEnvelope({
      type: 'booking.confirm',
      source: '/checkout',
      id: 'job-1',
      partitionKey: 'user-7',
      time: new Date('2026-11-29T07:00:00.000Z'),
      data: { bookingId: 'b-9' },
    });
    expect(parseEnvelope(JSON.stringify(envelope))).toEqual(envelope);
    expect(validateWithSchema(envelope)).toBe(true);
  });

  it('writes lineage and trace attributes given, checked like the parser', () => {
    const envelope = createEnvelope({
      type: 't',
      source: '/s',
      data: {},
      lineage: { correlationid: 'order-1', traceparent: TRACEPARENT },
    });
    expect(envelope).toMatchObject({ correlationid: 'order-1', traceparent: TRACEPARENT });
    expect(() =>
      createEnvelope({ type: 't', source: '/s', data: {}, lineage: { traceparent: '00-x' } }),
    ).toThrow(expect.objectContaining({ field: 'traceparent' }));
  });

  it.each([
    ['id', { id: '' }],
    ['id', { id: 'x'.repeat(257) }],
    ['source', { source: '' }],
    ['type', { type: '' }],
    ['partitionkey', { partitionKey: '' }],
    ['data', { data: undefined }],
  ])('refuses a bad %s with an EnvelopeError naming it', (field, override) => {
    const input = { type: 't', source: '/s', data: {}, ...override };
    expect(() => createEnvelope(input)).toThrow(expect.objectContaining({ name: 'EnvelopeError', field }));
  });
});

describe('deduplicationIdOf', () => {
  const job: Pick<JobEnvelope, 'source' | 'id' | 'type' | 'data'> = {
    source: '/checkout',
    id: 'job-1',
    type: 'payments.capture',
    data: { paymentId: 'p-1' },
  };

  it('is 64 hex chars, within the 128-char MessageDeduplicationId limit', () => {
    expect(deduplicationIdOf(job)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same for the same job and differs by source, by id, by type and by data', () => {
    expect(deduplicationIdOf({ ...job })).toBe(deduplicationIdOf(job));
    expect(deduplicationIdOf({ ...job, id: 'job-2' })).not.toBe(deduplicationIdOf(job));
    expect(deduplicationIdOf({ ...job, source: '/other' })).not.toBe(deduplicationIdOf(job));
    // A reused id for a different job is not swallowed by SQS's deduplication.
    expect(deduplicationIdOf({ ...job, type: 'payments.refund' })).not.toBe(deduplicationIdOf(job));
    expect(deduplicationIdOf({ ...job, data: { paymentId: 'p-2' } })).not.toBe(deduplicationIdOf(job));
  });

  it('is the SHA-256 of the JSON text of [source, id, type, data] (docs/contracts.md, for other languages)', () => {
    const text = '["/checkout","job-1","payments.capture",{"paymentId":"p-1"}]';
    expect(deduplicationIdOf(job)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
  });

  it('does not confuse jobs whose source and id only differ in where they are split', () => {
    expect(deduplicationIdOf({ ...job, source: 'a\nb', id: 'c' })).not.toBe(
      deduplicationIdOf({ ...job, source: 'a', id: 'b\nc' }),
    );
  });
});

describe('childJobId', () => {
  const parent = { source: '/checkout', id: 'job-1' };

  it('is UUID-shaped and stable across re-runs of the parent', () => {
    const id = childJobId(parent, 'booking.confirm', 0);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(childJobId({ ...parent }, 'booking.confirm', 0)).toBe(id);
  });

  it('differs by parent, child type and position', () => {
    const id = childJobId(parent, 'booking.confirm', 0);
    expect(childJobId({ ...parent, id: 'job-2' }, 'booking.confirm', 0)).not.toBe(id);
    expect(childJobId(parent, 'booking.invoice', 0)).not.toBe(id);
    expect(childJobId(parent, 'booking.confirm', 1)).not.toBe(id);
  });

  it('does not confuse parents whose source and id only differ in where they are split', () => {
    expect(childJobId({ source: 'a\nb', id: 'c' }, 't', 0)).not.toBe(
      childJobId({ source: 'a', id: 'b\nc' }, 't', 0),
    );
  });
});
