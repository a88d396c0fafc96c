/**
 * The local runtime's reading of a synthesized stack, without emulators: intrinsic functions
 * resolved on the fixture template, errors that name the intrinsic and the resource, creation
 * order, the cloud assembly (template and code assets), the synthesis freshness check, and the
 * two pure halves of the event source mapping (records in, responses out).
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { functionAssetDir, listStacks, readStack } from '../../lib/local/cloud-assembly.ts';
import {
  CloudAssemblyError,
  TemplateResolutionError,
  UnsupportedIntrinsicError,
} from '../../lib/local/errors.ts';
import { dependencyOrder } from '../../lib/local/provision/order.ts';
import { interpretBatchResponse, toSqsRecord } from '../../lib/local/sqs-event.ts';
import { ensureSynthesized, isAssemblyFresh, sourcePaths } from '../../lib/local/synth.ts';
import { type CfnTemplate, NO_VALUE, TemplateResolver } from '../../lib/local/template-resolver.ts';

const ASSEMBLY = fileURLToPath(new URL('../fixtures/local/assembly', import.meta.url));
const stack = readStack(ASSEMBLY);
const template = stack.template;
const pseudo = { region: 'eu-west-1', accountId: '123456789012', stackName: 'FixtureStack' };

/** Resource values as the provisioner would give them, for the resources the tests touch. */
function fakeValues(logicalId: string, attribute: string | undefined): unknown {
  const name = `FixtureStack-${logicalId}`;
  if (attribute === undefined) return logicalId.includes('Queue') ? `http://q/${name}` : name;
  if (attribute === 'Arn') return `arn:aws:sqs:eu-west-1:123456789012:${name}`;
  if (attribute === 'QueueName') return name;
  if (attribute === 'QueueUrl') return `http://q/${name}`;
  throw new TemplateResolutionError(`no ${attribute}`);
}

const resolver = (t: CfnTemplate = template, parameters?: Record<string, unknown>) =>
  new TemplateResolver(t, { pseudo, parameters, resourceValues: fakeValues });

describe('TemplateResolver on the fixture template', () => {
  const env = () =>
    resolver().resolve(
      template.Resources.EchoFunctionAABBCCDD?.Properties?.Environment,
      'Resources.EchoFunctionAABBCCDD.Properties.Environment',
    ) as { Variables: Record<string, string> };

  it('resolves Ref, Fn::GetAtt, Fn::Sub, Fn::Join, Fn::Select/Fn::Split and pseudo parameters', () => {
    const vars = env().Variables;
    expect(vars.JOBS_QUEUE_URL).toBe('http://q/FixtureStack-WorkQueue5A2E1B2C');
    expect(vars.OBSERVATIONS_QUEUE_URL).toBe('http://q/FixtureStack-ObservationsE1E2E3E4');
    expect(vars.QUEUE_ARN_VIA_SUB).toBe('arn:aws:sqs:eu-west-1:123456789012:FixtureStack-WorkQueue5A2E1B2C');
    expect(vars.REGION_AND_NAME).toBe('eu-west-1|FixtureStack-WorkQueue5A2E1B2C');
    expect(vars.DLQ_NAME_VIA_SELECT).toBe('FixtureStack-WorkDlq9C8B7A6D');
    expect(vars.FIXTURE_VALUE).toBe('echo');
  });

  it('evaluates Conditions in Fn::If and drops AWS::NoValue', () => {
    expect(env().Variables.STAGE_LABEL).toBe('local-stage');
    expect('PROD_ONLY' in env().Variables).toBe(false);
    const prod = resolver(template, { Stage: 'prod' });
    const vars = prod.resolve(
      template.Resources.EchoFunctionAABBCCDD?.Properties?.Environment,
      'Resources.EchoFunctionAABBCCDD.Properties.Environment',
    ) as { Variables: Record<string, string> };
    expect(vars.Variables.STAGE_LABEL).toBe('cloud-stage');
    expect(vars.Variables.PROD_ONLY).toBe('yes');
    expect(prod.condition('IsProd')).toBe(true);
    expect(resolver().isIncluded('IsProd', 'x')).toBe(false);
  });

  it('resolves Fn::Sub with its own variables and escapes, Fn::FindInMap and Fn::GetAZs', () => {
    const t: CfnTemplate = {
      Resources: { Q: { Type: 'AWS::SQS::Queue' } },
      Mappings: { Sizes: { 'eu-west-1': { Batch: 7 } } },
    };
    const r = resolver(t);
    expect(
      r.resolve({ 'Fn::Sub': [`\${Who}-\${!Literal}-\${AWS::AccountId}`, { Who: { Ref: 'Q' } }] }, 'x'),
    ).toBe(`FixtureStack-Q-\${Literal}-123456789012`);
    expect(r.resolve({ 'Fn::FindInMap': ['Sizes', { Ref: 'AWS::Region' }, 'Batch'] }, 'x')).toBe(7);
    expect(r.resolve({ 'Fn::Select': ['1', { 'Fn::GetAZs': '' }] }, 'x')).toBe('eu-west-1b');
    expect(r.resolve({ Ref: 'AWS::NoValue' }, 'x')).toBe(NO_VALUE);
  });

  it('names the unknown intrinsic function and the resource in its error', () => {
    const t: CfnTemplate = {
      Resources: {
        Fn: {
          Type: 'AWS::Lambda::Function',
          Properties: { Environment: { Variables: { SHARED: { 'Fn::ImportValue': 'OtherStack-Url' } } } },
        },
      },
    };
    const resolve = () => resolver(t).resolve(t.Resources.Fn?.Properties, 'Resources.Fn.Properties');
    expect(resolve).toThrow(UnsupportedIntrinsicError);
    expect(resolve).toThrow(
      /Fn::ImportValue.*Resources\.Fn\.Properties\.Environment\.Variables\.SHARED.*resource Fn/,
    );
  });

  it('rejects references to unknown resources and parameters without a default', () => {
    const t: CfnTemplate = {
      Resources: { A: { Type: 'AWS::SQS::Queue' } },
      Parameters: { Needed: { Type: 'String' } },
    };
    expect(() => resolver(t).resolve({ Ref: 'Missing' }, 'Outputs.X')).toThrow(
      /unknown resource Missing at Outputs\.X/,
    );
    expect(() => resolver(t).resolve({ 'Fn::GetAtt': ['Missing', 'Arn'] }, 'p')).toThrow(
      TemplateResolutionError,
    );
    expect(() => resolver(t).resolve({ Ref: 'Needed' }, 'p')).toThrow(/parameter Needed has no Default/);
    expect(resolver(t, { Needed: 'given' }).resolve({ Ref: 'Needed' }, 'p')).toBe('given');
    expect(() => resolver(t).resolve({ 'Fn::Select': [3, ['a']] }, 'p')).toThrow(/out of range/);
  });

  it('orders creation so a dead-letter queue comes before the queue naming it', () => {
    const order = dependencyOrder(template);
    const precedes = (a: string, b: string) => order.indexOf(a) < order.indexOf(b);
    expect(precedes('WorkDlq9C8B7A6D', 'WorkQueue5A2E1B2C')).toBe(true);
    expect(precedes('OrderedDlq4E5F6A7B', 'OrderedQueue0A1B2C3D')).toBe(true);
    expect(precedes('EchoServiceRoleDefaultPolicy55667788', 'EchoFunctionAABBCCDD')).toBe(true);
    expect(order).toHaveLength(Object.keys(template.Resources).length);
    const cyclic: CfnTemplate = {
      Resources: {
        A: { Type: 'X', Properties: { P: { Ref: 'B' } } },
        B: { Type: 'X', Properties: { P: { 'Fn::Sub': `\${A.Arn}` } } },
      },
    };
    expect(() => dependencyOrder(cyclic)).toThrow(/cycle among resources A, B/);
  });
});

describe('cloud assembly', () => {
  it('reads the stack and finds code assets by metadata and through the asset manifest', () => {
    expect(listStacks(ASSEMBLY)).toEqual([{ artifactId: 'FixtureStack', stackName: 'FixtureStack' }]);
    expect(stack.region).toBeUndefined();
    const echo = template.Resources.EchoFunctionAABBCCDD;
    const ordered = template.Resources.OrderedFunction01020304;
    if (!echo || !ordered) throw new Error('fixture changed');
    expect(functionAssetDir(stack, 'EchoFunctionAABBCCDD', echo, 'echo.zip')).toBe(
      join(ASSEMBLY, 'asset.echo'),
    );
    expect(functionAssetDir(stack, 'OrderedFunction01020304', ordered, '0f1e2d3c.zip')).toBe(
      join(ASSEMBLY, 'asset.0f1e2d3c'),
    );
    expect(() => functionAssetDir(stack, 'OrderedFunction01020304', ordered, 'nope.zip')).toThrow(
      CloudAssemblyError,
    );
  });

  it('explains a missing assembly and an unknown stack', () => {
    expect(() => readStack(join(ASSEMBLY, 'missing'))).toThrow(/manifest\.json missing/);
    expect(() => readStack(ASSEMBLY, 'OtherStack')).toThrow(/no stack OtherStack .*found: FixtureStack/);
  });
});

describe('ensureSynthesized', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('reuses cdk.out while it is newer than every source, and synthesizes again after a change', async () => {
    root = mkdtempSync(join(tmpdir(), 'sqs-jobs-synth-test-'));
    mkdirSync(join(root, 'lib'));
    writeFileSync(join(root, 'lib', 'stack.ts'), 'export {};');
    writeFileSync(join(root, 'package-lock.json'), '{}');
    const outdir = join(root, 'cdk.out');
    let runs = 0;
    const synthesize = async (dir: string) => {
      runs++;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'manifest.json'), '{"artifacts":{}}');
    };
    const first = await ensureSynthesized({ projectRoot: root, synthesize });
    expect(first).toMatchObject({ outdir, synthesized: true });
    const second = await ensureSynthesized({ projectRoot: root, synthesize });
    expect(second.synthesized).toBe(false);
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(root, 'lib', 'stack.ts'), later, later);
    expect(isAssemblyFresh(outdir, root)).toEqual({
      fresh: false,
      reason: 'lib changed after the last synthesis',
    });
    const third = await ensureSynthesized({ projectRoot: root, synthesize });
    expect(third.synthesized).toBe(true);
    expect(runs).toBe(2);
    const [a, b] = await Promise.all([
      ensureSynthesized({ projectRoot: root, synthesize, force: true }),
      ensureSynthesized({ projectRoot: root, synthesize, force: true }),
    ]);
    expect([a.synthesized, b.synthesized]).toEqual([true, true]);
    expect(runs).toBe(4);
  });
});

describe('SQS records and batch responses', () => {
  it('builds a record shaped like the one Lambda delivers', () => {
    const record = toSqsRecord(
      {
        MessageId: 'm-1',
        ReceiptHandle: 'rh-1',
        Body: '{"a":1}',
        MD5OfBody: 'md5',
        MD5OfMessageAttributes: 'md5attrs',
        Attributes: {
          ApproximateReceiveCount: '2',
          SentTimestamp: '1700000000000',
          SenderId: 'AIDA',
          ApproximateFirstReceiveTimestamp: '1700000000100',
          MessageGroupId: 'user-1',
          MessageDeduplicationId: 'dedup',
          SequenceNumber: '18',
        },
        MessageAttributes: {
          Kind: { DataType: 'String', StringValue: 'k' },
          Blob: { DataType: 'Binary', BinaryValue: new Uint8Array([104, 105]) },
        },
      },
      'arn:aws:sqs:eu-west-1:123456789012:q.fifo',
      'eu-west-1',
    );
    expect(record).toEqual({
      messageId: 'm-1',
      receiptHandle: 'rh-1',
      body: '{"a":1}',
      attributes: {
        ApproximateReceiveCount: '2',
        SentTimestamp: '1700000000000',
        SenderId: 'AIDA',
        ApproximateFirstReceiveTimestamp: '1700000000100',
        SequenceNumber: '18',
        MessageGroupId: 'user-1',
        MessageDeduplicationId: 'dedup',
      },
      messageAttributes: {
        Kind: { stringValue: 'k', stringListValues: [], binaryListValues: [], dataType: 'String' },
        Blob: { binaryValue: 'aGk=', stringListValues: [], binaryListValues: [], dataType: 'Binary' },
      },
      md5OfBody: 'md5',
      md5OfMessageAttributes: 'md5attrs',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:q.fifo',
      awsRegion: 'eu-west-1',
    });
  });

  const ids = ['a', 'b', 'c'];
  it.each([
    ['null', null, { kind: 'success' }],
    ['an empty object', {}, { kind: 'success' }],
    ['a null list', { batchItemFailures: null }, { kind: 'success' }],
    ['an empty list', { batchItemFailures: [] }, { kind: 'success' }],
    [
      'two ids of the batch',
      { batchItemFailures: [{ itemIdentifier: 'c' }, { itemIdentifier: 'a' }] },
      { kind: 'partial', failedIds: ['c', 'a'] },
    ],
  ])('treats %s as the right verdict', (_name, payload, verdict) => {
    expect(interpretBatchResponse(payload, ids, true)).toEqual(verdict);
  });

  it.each([
    ['a string', 'ok'],
    ['a list', [{ itemIdentifier: 'a' }]],
    ['a non-list batchItemFailures', { batchItemFailures: 'a' }],
    ['an empty itemIdentifier', { batchItemFailures: [{ itemIdentifier: '' }] }],
    ['a null itemIdentifier', { batchItemFailures: [{ itemIdentifier: null }] }],
    ['a misspelt key', { batchItemFailures: [{ itemIdentifer: 'a' }] }],
    ['an id from another batch', { batchItemFailures: [{ itemIdentifier: 'z' }] }],
  ])('fails the whole batch on %s', (_name, payload) => {
    expect(interpretBatchResponse(payload, ids, true).kind).toBe('failure');
  });

  it('ignores returned failures when ReportBatchItemFailures is not set', () => {
    expect(interpretBatchResponse({ batchItemFailures: [{ itemIdentifier: 'a' }] }, ids, false)).toEqual({
      kind: 'success',
    });
  });
});

describe('what an assembly is built from (sourcePaths)', () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("follows cdk.json's watch.include, else the whole project: a user's jobs/ and workers/ count", () => {
    root = mkdtempSync(join(tmpdir(), 'sqs-jobs-sources-'));
    expect(sourcePaths(root).dirs).toEqual(['.']);
    writeFileSync(
      join(root, 'cdk.json'),
      JSON.stringify({ watch: { include: ['bin/**', 'lib/**/*.ts', '**'] } }),
    );
    expect(sourcePaths(root).dirs).toEqual(['bin', 'lib', '.']);
    writeFileSync(join(root, 'cdk.json'), JSON.stringify({ watch: { include: 'src/*.ts' } }));
    expect(sourcePaths(root).dirs).toEqual(['src']);
    expect(sourcePaths(root).files).toEqual(
      expect.arrayContaining(['package-lock.json', 'cdk.json', 'package.json']),
    );
  });

  it('a change in a directory of the project that no fixed list names (jobs/) makes cdk.out stale; its own output never does', () => {
    root = mkdtempSync(join(tmpdir(), 'sqs-jobs-sources-'));
    for (const dir of ['jobs', 'workers', 'cdk.out', 'custom.out']) mkdirSync(join(root, dir));
    writeFileSync(join(root, 'jobs', 'invoices.ts'), 'export {};');
    writeFileSync(join(root, 'cdk.json'), JSON.stringify({ app: 'npx tsx bin/app.ts' }));
    const outdir = join(root, 'custom.out');
    writeFileSync(join(outdir, 'manifest.json'), '{}');
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(outdir, 'manifest.json'), later, later);
    expect(isAssemblyFresh(outdir, root).fresh).toBe(true);
    // Files written into the output directory after the manifest (assets) do not count.
    writeFileSync(join(outdir, 'asset.txt'), 'x');
    const evenLater = new Date(Date.now() + 10_000);
    utimesSync(join(outdir, 'asset.txt'), evenLater, evenLater);
    expect(isAssemblyFresh(outdir, root).fresh).toBe(true);
    utimesSync(join(root, 'jobs', 'invoices.ts'), evenLater, evenLater);
    expect(isAssemblyFresh(outdir, root)).toEqual({
      fresh: false,
      reason: 'jobs changed after the last synthesis',
    });
  });
});
