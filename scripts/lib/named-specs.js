// Whether `npm test`'s extra arguments name spec files (which then replace the default lists, decision 0149): an
// argument that is a path under the root or a glob, unless it is the value of a mocha option before it
// (`--grep webhooks` names no file, though the repository has a webhooks/ folder).
const fs = require('node:fs');
const path = require('node:path');

// Mocha's options whose value is the next argument. `--spec` is not among them: its value is a spec file.
const TAKES_VALUE = new Set([
  '--grep',
  '-g',
  '--fgrep',
  '-f',
  '--reporter',
  '-R',
  '--reporter-option',
  '--reporter-options',
  '-O',
  '--timeout',
  '-t',
  '--slow',
  '-s',
  '--retries',
  '--require',
  '-r',
  '--ui',
  '-u',
  '--jobs',
  '-j',
  '--config',
  '--package',
  '--file',
  '--ignore',
  '--exclude',
  '--extension',
]);

function namesSpecs(root, extra) {
  return extra.some(
    (arg, i) =>
      !arg.startsWith('-') &&
      !TAKES_VALUE.has(extra[i - 1]) &&
      (arg.includes('*') || fs.existsSync(path.resolve(root, arg))),
  );
}

module.exports = { namesSpecs };
