/**
 * Idempotency keys are injective: distinct (job type, key, step) never share a table key (`pk`)
 * or an external `Idempotency-Key`, whatever characters producers use; the default key of an
 * envelope keeps `source` and `id` apart; record keys decode back to their parts. Property
 * tests draw strings from an alphabet rich in the separators and escapes the encodings use
 * (`#`, `%`, newline, `step`, quotes, lone surrogates), so near-collisions are tried often.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JobError } from '../../lib/core/errors.ts';
import {
  DYNAMODB_MAX_PARTITION_KEY_BYTES,
  decodeDefaultJobKey,
  decodeRecordKey,
  defaultJobKey,
  deriveIdempotencyKey,
  escapeKeyPart,
  jobRecordKey,
  MAX_VERBATIM_JOB_KEY_BYTES,
  stepRecordKey,
  unescapeKeyPart,
} from '../../lib/runtime/idempotency/keys.ts';

/** One UTF-16 code unit or code point, biased towards what the encodings treat specially. */
const unit = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      '#',
      '%',
      '\n',
      's',
      't',
      'e',
      'p',
      'u',
      '2',
      '3',
      '5',
      'D',
      ':',
      '"',
      '[',
      ',',
      '\\',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);
/** Short strings made of units and of whole separators and escapes (`#step#`, `%23`...). */
const text = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: unit },
      {
        weight: 1,
        arbitrary: fc.constantFrom('#step#', 'step', '%23', '%25', '%uD800', '%sha256:', '["', '","'),
      },
    ),
    { minLength: 1, maxLength: 8 },
  )
  .map((units) => units.join(''));
/** Mostly short, sometimes long enough to be hashed. */
const part = fc.oneof(
  { weight: 9, arbitrary: text },
  { weight: 1, arbitrary: fc.string({ unit, minLength: 200, maxLength: 1200 }) },
);

/** A record address: job record (no step) or step record. */
const address = fc.record({ jobType: part, key: part, step: fc.option(part, { nil: undefined }) });
type Address = { jobType: string; key: string; step: string | undefined };

/** Every way to cut `s` in two at an occurrence of `sep`, both sides non-empty. */
function cuts(s: string, sep: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = s.indexOf(sep); i >= 0; i = s.indexOf(sep, i + 1)) {
    const left = s.slice(0, i);
    const right = s.slice(i + sep.length);
    if (left !== '' && right !== '') out.push([left, right]);
  }
  return out;
}

/**
 * The addresses that a naive encoding (parts joined with `#`, `#step#` before the step) would
 * confuse with `a`: its joined text cut at every other separator, as job and as step records.
 * This is how the collisions seen in production were made; random strings rarely hit them.
 */
function lookalikes(a: Address): Address[] {
  const job = `${a.jobType}#${a.key}`;
  const joined = a.step === undefined ? job : `${job}#step#${a.step}`;
  const out: Address[] = [a];
  for (const [jobType, key] of cuts(joined, '#')) out.push({ jobType, key, step: undefined });
  for (const [prefix, step] of cuts(joined, '#step#')) {
    for (const [jobType, key] of cuts(prefix, '#')) out.push({ jobType, key, step });
  }
  return out;
}

function pkOf(a: Address): string {
  const job = jobRecordKey(a.jobType, a.key);
  return a.step === undefined ? job : stepRecordKey(job, a.step);
}

const addressId = (a: Address) => JSON.stringify([a.jobType, a.key, a.step ?? null]);

/** Distinct addresses with their lookalikes (compared by their parts: JSON keeps lone surrogates apart). */
const distinctAddresses = fc.array(address, { minLength: 1, maxLength: 10 }).map((seeds) => {
  const byId = new Map<string, Address>();
  for (const a of seeds.flatMap(lookalikes)) byId.set(addressId(a), a);
  return [...byId.values()];
});

/** What DynamoDB stores and compares: the UTF-8 bytes (a lone surrogate becomes U+FFFD there). */
const stored = (s: string) => Buffer.from(s, 'utf8').toString('hex');

function isWellFormed(s: string): boolean {
  return Buffer.from(s, 'utf8').toString('utf8') === s;
}

/** Every way to cut `s` in three at two newlines, all parts non-empty but the middle one. */
function threeWayNewlineCuts(s: string): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  for (const [first, rest] of cuts(s, '\n')) {
    for (const [middle, last] of cuts(rest, '\n')) out.push([first, middle, last]);
  }
  return out;
}

describe('record keys (pk)', () => {
  it('never map two distinct (job type, key, step) to one pk, job and step records alike', () => {
    fc.assert(
      fc.property(distinctAddresses, (addresses) => {
        const pks = addresses.map((a) => stored(pkOf(a)));
        expect(new Set(pks).size).toBe(addresses.length);
      }),
      { numRuns: 500 },
    );
  });

  it('stay within the 2,048-byte partition key limit and are well-formed UTF-8 (DynamoDB stores them unchanged)', () => {
    fc.assert(
      fc.property(address, (a) => {
        const pk = pkOf(a);
        expect(Buffer.byteLength(pk, 'utf8')).toBeLessThanOrEqual(DYNAMODB_MAX_PARTITION_KEY_BYTES);
        expect(isWellFormed(pk)).toBe(true);
      }),
      { numRuns: 300 },
    );
    const longest = stepRecordKey(jobRecordKey('t'.repeat(5000), '#'.repeat(5000)), '%'.repeat(5000));
    expect(Buffer.byteLength(longest)).toBeLessThanOrEqual(DYNAMODB_MAX_PARTITION_KEY_BYTES);
  });

  it('decode back to their kind and parts (hashed parts as their hash)', () => {
    fc.assert(
      fc.property(address, (a) => {
        const decoded = decodeRecordKey(pkOf(a));
        expect(decoded.kind).toBe(a.step === undefined ? 'job' : 'step');
        const expectPart = (got: unknown, want: string) => {
          if (got && typeof got === 'object' && 'sha256' in got) {
            expect(got.sha256).toMatch(/^[0-9a-f]{64}$/);
            expect(Buffer.byteLength(escapeKeyPart(want))).toBeGreaterThan(250);
          } else {
            expect(got).toEqual({ text: want });
          }
        };
        expectPart(decoded.jobType, a.jobType);
        expectPart(decoded.key, a.key);
        if (decoded.kind === 'step') expectPart(decoded.stepName, a.step as string);
      }),
      { numRuns: 300 },
    );
  });

  it('escape parts reversibly, leaving no separator and no lone surrogate', () => {
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 40 }), (s) => {
        const escaped = escapeKeyPart(s);
        expect(escaped).not.toContain('#');
        expect(isWellFormed(escaped)).toBe(true);
        expect(unescapeKeyPart(escaped)).toBe(s);
      }),
      { numRuns: 500 },
    );
    expect(() => unescapeKeyPart('50%')).toThrow(JobError);
    expect(() => decodeRecordKey('a#b#c')).toThrow(JobError);
  });

  it('keep apart the colliding pairs seen in production', () => {
    // A job whose id looks like a step suffix is not the step record of another job.
    const job = jobRecordKey('payments.capture', '/s\nc');
    expect(stepRecordKey(job, 'charge')).not.toBe(jobRecordKey('payments.capture', '/s\nc#step#charge'));
    expect(jobRecordKey('payments.capture', '/s\nc#step#charge')).toBe(
      'payments.capture#/s\nc%23step%23charge',
    );
    // A job type holding '#' is not a prefix of another job type's keys.
    expect(jobRecordKey('a#b', 'c')).not.toBe(jobRecordKey('a', 'b#c'));
    // Lone surrogates would both become U+FFFD in UTF-8: they stay apart.
    expect(jobRecordKey('t', '\uD800')).not.toBe(jobRecordKey('t', '\uD801'));
    // A verbatim key that looks like a hashed one.
    const hashed = jobRecordKey('t', 'x'.repeat(2000));
    expect(hashed).toMatch(/^t#%sha256:[0-9a-f]{64}$/);
    const lookalike = hashed.slice(2);
    expect(jobRecordKey('t', lookalike)).not.toBe(hashed);
  });

  it('keep the pk of keys without #, % or lone surrogates as before (no re-run on upgrade)', () => {
    expect(jobRecordKey('payments.capture', '/checkout\njob-1')).toBe('payments.capture#/checkout\njob-1');
    expect(stepRecordKey('payments.capture#/checkout\njob-1', 'charge')).toBe(
      'payments.capture#/checkout\njob-1#step#charge',
    );
    expect(Buffer.byteLength(jobRecordKey('a', 'x'.repeat(MAX_VERBATIM_JOB_KEY_BYTES - 2)))).toBe(
      MAX_VERBATIM_JOB_KEY_BYTES,
    );
  });

  it('refuse empty parts and a step under something that is not a job record key', () => {
    expect(() => jobRecordKey('', 'k')).toThrow(JobError);
    expect(() => jobRecordKey('a', '')).toThrow(JobError);
    expect(() => stepRecordKey('a#k', '')).toThrow(JobError);
    expect(() => stepRecordKey('a#k#step#x', 'y')).toThrow(JobError);
  });
});

describe('default job key (source + id)', () => {
  it('never maps two distinct (source, id) to one key, and decodes back', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text), { minLength: 1, maxLength: 10 }), (seeds) => {
        // With every (source, id) that `<source>\n<id>` would confuse with a seed.
        const pairs = new Map<string, [string, string]>();
        for (const seed of seeds) {
          for (const pair of [seed, ...cuts(`${seed[0]}\n${seed[1]}`, '\n')]) {
            pairs.set(JSON.stringify(pair), pair);
          }
        }
        const keys = [...pairs.values()].map(([source, id]) => defaultJobKey(source, id));
        expect(new Set(keys).size).toBe(pairs.size);
        [...pairs.values()].forEach(([source, id], i) => {
          expect(decodeDefaultJobKey(keys[i] as string)).toEqual({ source, id });
        });
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the key of a source without newline as before', () => {
    expect(defaultJobKey('/checkout', 'job-1')).toBe('/checkout\njob-1');
    expect(defaultJobKey('/s', 'x\ny')).not.toBe(defaultJobKey('/s\nx', 'y'));
  });
});

describe('external Idempotency-Key (ctx.idempotencyKey)', () => {
  it('never gives two distinct (job type, key, step) one value', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(part, part, text), { minLength: 1, maxLength: 10 }), (seeds) => {
        // With every triple that `<jobType>\n<key>\n<step>` would confuse with a seed.
        const triples = new Map<string, [string, string, string]>();
        for (const seed of seeds) {
          for (const triple of [seed, ...threeWayNewlineCuts(seed.join('\n'))]) {
            triples.set(JSON.stringify(triple), triple);
          }
        }
        const keys = [...triples.values()].map(([jobType, key, step]) =>
          deriveIdempotencyKey(jobType, key, step),
        );
        expect(new Set(keys).size).toBe(triples.size);
        for (const k of keys) expect(k).toMatch(/^[0-9a-f]{64}$/);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps apart triples that joined with newlines read the same, and lone surrogates', () => {
    expect(deriveIdempotencyKey('a', 'b\nc', 'd')).not.toBe(deriveIdempotencyKey('a\nb', 'c', 'd'));
    expect(deriveIdempotencyKey('a', 'b', 'c\nd')).not.toBe(deriveIdempotencyKey('a', 'b\nc', 'd'));
    expect(deriveIdempotencyKey('a', '\uD800', 'd')).not.toBe(deriveIdempotencyKey('a', '\uD801', 'd'));
  });

  it('keeps the value already sent to external APIs for ordinary job types and steps', () => {
    const before = createHash('sha256').update('payments.capture\n/checkout\njob-1\ncharge').digest('hex');
    expect(deriveIdempotencyKey('payments.capture', '/checkout\njob-1', 'charge')).toBe(before);
  });
});
