// BullMQ against the server, unmodified: a producer adds jobs, a Worker processes them, a
// delayed job waits its delay, a job scheduler repeats a job, a flaky job is retried until it
// succeeds and a broken one fails after its attempts. QueueEvents follows it all through the
// events stream (XREAD BLOCK). Run by tests/test_script_apps.py:
//   node bullmq_smoke.js <port> [<host>]
// Prints one JSON line with what it saw and exits 0, or prints the failure and exits 1
// (2 when it did not finish within DEADLINE_MS).
'use strict';

const { Queue, Worker, QueueEvents } = require('bullmq');

const DEADLINE_MS = 45000;
const PLAIN_JOBS = 30;
const DELAY_MS = 800;
const REPEAT_EVERY_MS = 300;
const REPEATS_WANTED = 3;

const port = Number(process.argv[2]);
const host = process.argv[3] || '127.0.0.1';
if (!port) {
  console.error('usage: node bullmq_smoke.js <port> [<host>]');
  process.exit(64);
}
const connection = { host, port, maxRetriesPerRequest: null };
const queueName = `smoke-${process.pid}`;

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

function waitFor(pred, what, timeoutMs = 20000) {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const poll = () => {
      if (pred()) return resolve();
      if (Date.now() - start > timeoutMs) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(poll, 20);
    };
    poll();
  });
}

async function main() {
  const queue = new Queue(queueName, { connection });
  const events = new QueueEvents(queueName, { connection });
  await events.waitUntilReady();
  await queue.waitUntilReady();

  const completedEvents = new Set();
  const failedEvents = [];
  events.on('completed', ({ jobId }) => completedEvents.add(jobId));
  events.on('failed', ({ jobId, failedReason }) => failedEvents.push({ jobId, failedReason }));

  const processed = new Map(); // job id -> times its processor ran
  const flakyAttempts = [];
  const repeatRuns = [];
  let delayedRunAt = 0;

  const worker = new Worker(
    queueName,
    async (job) => {
      processed.set(job.id, (processed.get(job.id) || 0) + 1);
      switch (job.name) {
        case 'add':
          return job.data.a + job.data.b;
        case 'delayed':
          delayedRunAt = Date.now();
          return 'late';
        case 'tick':
          repeatRuns.push(Date.now());
          return 'tick';
        case 'flaky':
          flakyAttempts.push(job.attemptsMade);
          if (job.attemptsMade < 2) throw new Error(`flaky attempt ${job.attemptsMade}`);
          return 'recovered';
        case 'broken':
          throw new Error('always broken');
        default:
          throw new Error(`unexpected job ${job.name}`);
      }
    },
    { connection, concurrency: 4 },
  );
  worker.on('error', (err) => console.error('worker error:', err));
  await worker.waitUntilReady();

  // Plain jobs, one by one and in bulk (MULTI/EXEC of EVALSHAs).
  const plain = [];
  for (let i = 0; i < PLAIN_JOBS / 2; i++) {
    plain.push(await queue.add('add', { a: i, b: 100 }));
  }
  plain.push(
    ...(await queue.addBulk(
      Array.from({ length: PLAIN_JOBS / 2 }, (_, k) => ({
        name: 'add',
        data: { a: PLAIN_JOBS / 2 + k, b: 100 },
      })),
    )),
  );
  const delayedAddedAt = Date.now();
  const delayed = await queue.add('delayed', {}, { delay: DELAY_MS });
  check((await delayed.getState()) === 'delayed', 'the delayed job starts in the delayed set');
  const flaky = await queue.add('flaky', {}, { attempts: 3, backoff: { type: 'fixed', delay: 100 } });
  const broken = await queue.add('broken', {}, { attempts: 2, backoff: { type: 'fixed', delay: 50 } });
  await queue.upsertJobScheduler('ticker', { every: REPEAT_EVERY_MS }, { name: 'tick' });

  await waitFor(() => plain.every((j) => completedEvents.has(j.id)), 'the plain jobs');
  for (const [i, j] of plain.entries()) {
    const fresh = await queue.getJob(j.id);
    check(fresh.returnvalue === i + 100, `job ${j.id} returned ${fresh.returnvalue}`);
    check(processed.get(j.id) === 1, `job ${j.id} ran ${processed.get(j.id)} times`);
  }
  await waitFor(() => completedEvents.has(delayed.id), 'the delayed job');
  check(delayedRunAt - delayedAddedAt >= DELAY_MS - 50,
    `the delayed job ran after ${delayedRunAt - delayedAddedAt} ms, not ${DELAY_MS}`);
  await waitFor(() => completedEvents.has(flaky.id), 'the flaky job to succeed');
  check(JSON.stringify(flakyAttempts) === '[0,1,2]', `flaky attempts ${flakyAttempts}`);
  check((await queue.getJob(flaky.id)).returnvalue === 'recovered', 'the flaky job result');
  await waitFor(() => failedEvents.some((e) => e.jobId === broken.id),
    'the broken job to fail for good');
  check(processed.get(broken.id) === 2, `the broken job ran ${processed.get(broken.id)} times`);
  const brokenState = await broken.getState();
  check(brokenState === 'failed', `the broken job is ${brokenState}`);
  check((await queue.getJob(broken.id)).failedReason === 'always broken', 'failedReason');
  await waitFor(() => repeatRuns.length >= REPEATS_WANTED, 'the repeated job');
  await queue.removeJobScheduler('ticker');

  const counts = await queue.getJobCounts('completed', 'failed', 'waiting', 'active');
  check(counts.failed === 1, `failed count ${counts.failed}`);
  check(counts.completed >= PLAIN_JOBS + 2 + REPEATS_WANTED, `completed count ${counts.completed}`);

  await worker.close();
  await events.close();
  await queue.obliterate({ force: true });
  await queue.close();
  console.log(JSON.stringify({
    plain: plain.length, delayedAfterMs: delayedRunAt - delayedAddedAt, flakyAttempts,
    repeats: repeatRuns.length, counts,
  }));
}

const deadline = setTimeout(() => {
  console.error(`bullmq_smoke: not done within ${DEADLINE_MS} ms`);
  process.exit(2);
}, DEADLINE_MS);

main().then(
  () => {
    clearTimeout(deadline);
    process.exit(0);
  },
  (err) => {
    console.error('bullmq_smoke:', err && err.stack ? err.stack : err);
    process.exit(1);
  },
);
