import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Bundles the workflows in a child process (same node and loader flags as this one) and returns the code.
 * Built at every start, so the bundle can never be older than the code; the scratch file is removed.
 */
export async function buildWorkflowBundle(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cambio-workflows-'));
  try {
    const out = path.join(dir, 'workflow-bundle.js');
    // bundle.ts under tsx (tests, development), bundle.js when running compiled from dist/.
    const script = path.join(__dirname, `bundle${path.extname(__filename)}`);
    await run(process.execPath, [...process.execArgv, script, out], { maxBuffer: 16 * 1024 * 1024 });
    return await readFile(out, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
