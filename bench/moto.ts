/**
 * New records per second with idempotency on moto server (issue 10, part of `npm run bench`):
 * both sides of bench/vs-powertools.ts (`storeHandlers`) in this process, each on its own table of
 * one moto server (Python, a real HTTP DynamoDB emulator: every record costs its round trips), the
 * same batches of 10 new records, alternating batch by batch with the order flipped each time.
 * Records/s = records / wall time the side spent in its handler. Figures, not assertions.
 *
 * moto_server is found as `MOTO_SERVER`, on the PATH, or in the project's `.ci/.venv` (this
 * checkout's or, from a git worktree, the main checkout's; `.ci/run` installs it there). Without
 * it the rows are left out with a note on stderr.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startMotoServer } from '../test/factories/moto-server.ts';
import { lambdaContext } from '../test/factories/sqs.ts';
import { createClient, createTable } from '../test/support/dynalite.ts';
import { type ComparisonRow, newRecordBatches, storeHandlers } from './vs-powertools.ts';

const root = new URL('../', import.meta.url).pathname;

/** The moto_server executable, or undefined when there is none. */
export function findMotoServer(): string | undefined {
  const candidates = [process.env.MOTO_SERVER, join(root, '.ci/.venv/bin/moto_server')];
  try {
    const common = execFileSync('git', ['rev-parse', '--git-common-dir'], {
      cwd: root,
      encoding: 'utf8',
    }).trim();
    candidates.push(join(dirname(resolve(root, common)), '.ci/.venv/bin/moto_server'));
  } catch {
    // not a git checkout: PATH and the local venv only
  }
  if (spawnSync('moto_server', ['--help'], { stdio: 'ignore' }).status === 0)
    candidates.unshift('moto_server');
  return candidates.find((c): c is string => c !== undefined && (c === 'moto_server' || existsSync(c)));
}

/** Records/s of both sides on one moto server, `batches` batches of 10 new records per side. */
export async function motoRows(batches: number): Promise<ComparisonRow[]> {
  const moto = findMotoServer();
  if (moto === undefined) {
    process.stderr.write('bench: moto_server not found (MOTO_SERVER, PATH, .ci/.venv): moto rows left out\n');
    return [];
  }
  const server = await startMotoServer(moto);
  const { endpoint } = server;
  try {
    const oursClient = createClient(endpoint);
    const theirsClient = createClient(endpoint);
    const { ours, theirs } = storeHandlers(
      oursClient,
      await createTable(oursClient),
      theirsClient,
      await createTable(theirsClient, { partitionKey: 'id' }),
    );
    const context = lambdaContext();
    // Warm-up (connections, JIT), untimed.
    for (const event of newRecordBatches(3)) {
      await ours(event, context);
      await theirs(event, context);
    }
    const wallMs = [0, 0];
    for (const [i, event] of newRecordBatches(batches).entries()) {
      const order = i % 2 === 0 ? [0, 1] : [1, 0];
      for (const side of order) {
        const started = performance.now();
        const response = await (side === 0 ? ours : theirs)(event, context);
        wallMs[side] = (wallMs[side] as number) + performance.now() - started;
        if (response.batchItemFailures.length > 0) throw new Error('bench record failed (moto)');
      }
    }
    oursClient.destroy();
    theirsClient.destroy();
    const records = batches * 10;
    const oursRate = records / ((wallMs[0] as number) / 1000);
    const theirsRate = records / ((wallMs[1] as number) / 1000);
    return [
      {
        measure: 'new records/s, standard batches of 10, idempotency on moto server',
        unit: 'records/s',
        ours: oursRate,
        powertools: theirsRate,
        // Higher is better here: the ratio stays ours / powertools.
        ratio: oursRate / theirsRate,
      },
    ];
  } finally {
    server.stop();
  }
}
