'use strict';
// How `npm test` splits the whole suite into shards that take about as long (decisions 0149, 0152), and the record
// of each spec file's seconds that weighs them.

const fs = require('node:fs');
const path = require('node:path');

/**
 * Each file's seconds (paths relative to `root`), as the record at `timesFile` says; a file it does not name is
 * given its size times the recorded files' seconds per byte, and with no record at all its size alone.
 * `recorded`: the files the record names.
 */
function fileSeconds(root, files, timesFile) {
  let record = {};
  try {
    record = JSON.parse(fs.readFileSync(timesFile, 'utf8'));
  } catch {
    // no record (or not readable): every file is weighed by its size
  }
  const sizes = new Map(files.map((file) => [file, fs.statSync(path.join(root, file)).size]));
  const recorded = new Set(files.filter((file) => typeof record[file] === 'number'));
  const bytes = [...recorded].reduce((n, file) => n + sizes.get(file), 0);
  const perByte = bytes > 0 ? [...recorded].reduce((n, file) => n + record[file], 0) / bytes : 1;
  const seconds = new Map(files.map((file) => [file, recorded.has(file) ? record[file] : sizes.get(file) * perByte]));
  return { seconds, recorded };
}

/**
 * `units` all run in the first shard, their recorded seconds counted there (a unit file not recorded yet takes
 * seconds: none); each of `integration`, longest first, goes to the lightest shard so far. Returns each shard's
 * integration files in name order, as the serial run has them: a file meets only files the serial run had run
 * before it.
 */
function splitIntoShards({ root, count, units, integration, timesFile }) {
  const { seconds, recorded } = fileSeconds(root, [...units, ...integration], timesFile);
  const out = Array.from({ length: count }, () => ({ files: [], weight: 0 }));
  out[0].weight = units.reduce((n, file) => n + (recorded.has(file) ? seconds.get(file) : 0), 0);
  const longestFirst = [...integration].sort((a, b) => seconds.get(b) - seconds.get(a) || a.localeCompare(b));
  for (const file of longestFirst) {
    const lightest = out.reduce((min, shard) => (shard.weight < min.weight ? shard : min));
    lightest.files.push(file);
    lightest.weight += seconds.get(file);
  }
  return out.map((shard) => shard.files.sort());
}

/** What one shard's reporter wrote (`{file: seconds}`), or undefined; the file is removed either way. */
function takeShardTimes(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** Writes the shards' times as one record, sorted by file, so that a refresh reads as a diff. */
function writeFileTimes(timesFile, shardTimes) {
  const times = Object.assign({}, ...shardTimes);
  const sorted = Object.fromEntries(
    Object.keys(times)
      .sort()
      .map((file) => [file, times[file]]),
  );
  fs.writeFileSync(timesFile, `${JSON.stringify(sorted, null, 2)}\n`);
  return Object.keys(sorted).length;
}

module.exports = { fileSeconds, splitIntoShards, takeShardTimes, writeFileTimes };
