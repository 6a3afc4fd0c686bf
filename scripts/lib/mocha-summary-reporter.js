'use strict';
// Mocha's spec reporter plus one plain closing line, `N passed, N failed`, for humans and CI logs to grep.
// Used by scripts/test.js (`npm test`); any other reporter can still be chosen with `npm test -- --reporter dot`.

const Mocha = require('mocha');

const { Spec } = Mocha.reporters;
const { EVENT_RUN_END } = Mocha.Runner.constants;

class SummaryReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    // Registered after Spec's own listener, so this prints after the "N passing" epilogue.
    runner.once(EVENT_RUN_END, () => {
      const { passes = 0, failures = 0 } = this.stats || {};
      process.stdout.write(`${passes} passed, ${failures} failed\n`);
    });
  }
}

SummaryReporter.description = 'spec, then a closing "N passed, N failed" line';
module.exports = SummaryReporter;
