// npm run lint:openapi: /openapi.json as the API serves it, checked by Redocly's linter with its recommended
// rules (redocly.yaml). Offline: telemetry and the update check are off, nothing is fetched. Exit code: the
// linter's (non-zero on any error).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config';
import { openApiDocument } from '../api/openapi';
import { DEFAULT_VERSION, VERSIONS } from '../api/versions';
import type { ServiceContext } from '../services/context';

const ROOT = path.join(__dirname, '..');

export function lintOpenApi(): { status: number; output: string } {
  // Building the route table registers handlers only; nothing of the services is used until a request comes.
  // Sandbox on, so its routes are linted too.
  const services = { config: { ...loadConfig(), sandbox: true } } as ServiceContext;
  const doc = openApiDocument(
    VERSIONS.get(DEFAULT_VERSION)!.routes(services),
    DEFAULT_VERSION,
    'http://127.0.0.1:3000',
    'http://127.0.0.1:3000/api/oauth/client/token',
  );
  const dir = mkdtempSync(path.join(tmpdir(), 'cambio-openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const run = spawnSync(
      process.execPath,
      [
        require.resolve('@redocly/cli/bin/cli.js'),
        ...['lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format', 'stylish'],
      ],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      },
    );
    return { status: run.status ?? 1, output: `${run.stdout ?? ''}${run.stderr ?? ''}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const { status, output } = lintOpenApi();
  process.stdout.write(output);
  process.exit(status);
}
