// How `npm test` splits the whole suite (scripts/lib/shards.js, decisions 0149 and 0152): by each file's recorded
// seconds, a file not recorded by its size at the recorded seconds per byte, with no record by size alone.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const { fileSeconds, splitIntoShards, takeShardTimes, writeFileTimes } = require('../../scripts/lib/shards') as {
  fileSeconds(
    root: string,
    files: string[],
    timesFile: string,
  ): { seconds: Map<string, number>; recorded: Set<string> };
  splitIntoShards(o: {
    root: string;
    count: number;
    units: string[];
    integration: string[];
    timesFile: string;
  }): string[][];
  takeShardTimes(file: string): Record<string, number> | undefined;
  writeFileTimes(timesFile: string, shardTimes: Record<string, number>[]): number;
};

describe('npm test shards', () => {
  let root: string;
  const timesFile = () => path.join(root, 'times.json');
  /** Spec files of the given sizes in bytes. */
  const files = (sizes: Record<string, number>) => {
    for (const [file, bytes] of Object.entries(sizes)) {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), 'x'.repeat(bytes));
    }
    return Object.keys(sizes);
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'cambio-shards-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('weighs by recorded seconds: a small slow file is not counted as small', () => {
    const units = files({ 'unit/a.test.ts': 100 });
    const integration = files({ 'int/slow.test.ts': 100, 'int/b.test.ts': 1000, 'int/c.test.ts': 1000 });
    // By size, slow goes with one of the large ones; by time it is alone against both.
    writeFileTimes(timesFile(), [
      { 'unit/a.test.ts': 1, 'int/slow.test.ts': 90 },
      { 'int/b.test.ts': 40, 'int/c.test.ts': 40 },
    ]);
    const split = splitIntoShards({ root, count: 2, units, integration, timesFile: timesFile() });
    expect(split).to.deep.equal([['int/b.test.ts', 'int/c.test.ts'], ['int/slow.test.ts']]);
  });

  it('counts the unit tests in the first shard', () => {
    const units = files({ 'unit/a.test.ts': 10 });
    const integration = files({ 'int/x.test.ts': 10, 'int/y.test.ts': 10 });
    writeFileTimes(timesFile(), [{ 'unit/a.test.ts': 30, 'int/x.test.ts': 20, 'int/y.test.ts': 20 }]);
    const split = splitIntoShards({ root, count: 2, units, integration, timesFile: timesFile() });
    // The first shard starts at 30 s: both integration files go to the second.
    expect(split).to.deep.equal([[], ['int/x.test.ts', 'int/y.test.ts']]);
  });

  it('gives a file the record does not name its size at the recorded seconds per byte', () => {
    const names = files({ 'int/old.test.ts': 2000, 'int/new.test.ts': 500 });
    writeFileTimes(timesFile(), [{ 'int/old.test.ts': 40 }]);
    const { seconds, recorded } = fileSeconds(root, names, timesFile());
    expect(seconds.get('int/old.test.ts')).to.equal(40);
    expect(seconds.get('int/new.test.ts')).to.equal(10);
    expect([...recorded]).to.deep.equal(['int/old.test.ts']);
  });

  it('weighs by size when there is no record, and returns each shard in name order', () => {
    const integration = files({
      'int/d.test.ts': 300,
      'int/a.test.ts': 100,
      'int/c.test.ts': 200,
      'int/b.test.ts': 150,
    });
    const split = splitIntoShards({ root, count: 2, units: [], integration, timesFile: timesFile() });
    // 300 | 200, then 150 to the 200 side (350), then 100 to the 300 side (400).
    expect(split).to.deep.equal([
      ['int/a.test.ts', 'int/d.test.ts'],
      ['int/b.test.ts', 'int/c.test.ts'],
    ]);
  });

  it("writes the record sorted by file, and takes a shard's file once", () => {
    const shardFile = path.join(root, 'shard-0.json');
    fs.writeFileSync(shardFile, JSON.stringify({ 'int/z.test.ts': 2, 'int/a.test.ts': 1 }));
    const taken = takeShardTimes(shardFile);
    expect(taken).to.deep.equal({ 'int/z.test.ts': 2, 'int/a.test.ts': 1 });
    expect(fs.existsSync(shardFile), 'removed').to.equal(false);
    expect(takeShardTimes(shardFile), 'a shard that wrote nothing').to.equal(undefined);
    expect(writeFileTimes(timesFile(), [taken!, { 'unit/m.test.ts': 3 }])).to.equal(3);
    expect(Object.keys(JSON.parse(fs.readFileSync(timesFile(), 'utf8')))).to.deep.equal([
      'int/a.test.ts',
      'int/z.test.ts',
      'unit/m.test.ts',
    ]);
  });
});

describe('npm test arguments', () => {
  const { namesSpecs } = require('../../scripts/lib/named-specs') as {
    namesSpecs(root: string, extra: string[]): boolean;
  };
  const root = path.resolve(__dirname, '../..');

  it('names spec files by path or glob, never by the value of an option (`--grep webhooks`)', () => {
    expect(namesSpecs(root, ['test/unit/money.test.ts'])).to.equal(true);
    expect(namesSpecs(root, ['test/integration/*.test.ts'])).to.equal(true);
    expect(namesSpecs(root, ['--spec', 'test/unit/money.test.ts'])).to.equal(true);
    // webhooks/ and statements/ are folders of the repository: after --grep they are words to match.
    expect(namesSpecs(root, ['--grep', 'webhooks'])).to.equal(false);
    expect(namesSpecs(root, ['-g', 'statements', '--timeout', '5000'])).to.equal(false);
    expect(namesSpecs(root, ['--grep=webhooks'])).to.equal(false);
  });
});
