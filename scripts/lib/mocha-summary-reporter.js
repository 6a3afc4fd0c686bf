'use strict';
// Mocha's spec reporter plus one plain closing line, `N passed, N failed`, for humans and CI logs to grep.
// Used by scripts/test.js (`npm test`); any other reporter can still be chosen with `npm test -- --reporter dot`.
// Before that line it lists the slowest spec files: the suite has a 15-minute budget, and this is where it goes.
// Then one plain `failed: <title> (<file>): <message>` line per failed test, which scripts/test.js repeats at the very
// end of a sharded run: a CI log is often read from its tail, where another shard's output may have pushed mocha's own
// list, and without the message a timing assertion that failed there cannot be told from one that failed by far.

const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');

const { Spec } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_TEST_FAIL } = Mocha.Runner.constants;
const SLOWEST = 15;
const REASON_CHARS = 2000;

/** The failure's message on one line, cut at REASON_CHARS: `: <message>`, or nothing without one. */
function reasonOf(err) {
  const message = String(err?.message ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  if (!message) return '';
  return `: ${message.length > REASON_CHARS ? `${message.slice(0, REASON_CHARS)}…` : message}`;
}

class SummaryReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    // A file's time runs from its first top-level suite's start to its last one's end (hooks included).
    const files = new Map();
    const failed = [];
    runner.on(EVENT_TEST_FAIL, (test, err) => {
      const file = test.file ?? test.parent?.file;
      const where = file ? ` (${path.relative(process.cwd(), file)})` : '';
      failed.push(`failed: ${test.fullTitle()}${where}${reasonOf(err)}`);
    });
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (!suite.file || !suite.parent?.root) return;
      const entry = files.get(suite.file) ?? { start: Date.now(), end: Date.now() };
      files.set(suite.file, entry);
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      if (suite.file && suite.parent?.root && files.has(suite.file)) files.get(suite.file).end = Date.now();
    });
    // Registered after Spec's own listener, so this prints after the "N passing" epilogue.
    runner.once(EVENT_RUN_END, () => {
      const slowest = [...files].map(([file, t]) => [file, t.end - t.start]).sort((a, b) => b[1] - a[1]);
      if (slowest.length > 1) {
        process.stdout.write(`\n  slowest spec files:\n`);
        for (const [file, ms] of slowest.slice(0, SLOWEST)) {
          process.stdout.write(`  ${(ms / 1000).toFixed(1).padStart(7)} s  ${path.relative(process.cwd(), file)}\n`);
        }
        process.stdout.write('\n');
      }
      // scripts/test.js names a file here in a sharded run: each file's seconds, to weigh the next runs' shards.
      if (process.env.CAMBIO_TEST_TIMES_OUT) {
        const times = Object.fromEntries(
          slowest.map(([file, ms]) => [path.relative(process.cwd(), file), Math.round(ms / 100) / 10]),
        );
        fs.writeFileSync(process.env.CAMBIO_TEST_TIMES_OUT, JSON.stringify(times));
      }
      for (const line of failed) process.stdout.write(`${line}\n`);
      const { passes = 0, failures = 0 } = this.stats || {};
      process.stdout.write(`${passes} passed, ${failures} failed\n`);
    });
  }
}

SummaryReporter.description = 'spec, then the slowest spec files and a closing "N passed, N failed" line';
module.exports = SummaryReporter;
