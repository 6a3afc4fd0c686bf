// docker-compose.yml is a production deployment (docs/decisions/0114): there is no Docker engine here, so the file is
// read as YAML and held to what it must say. Its Temporal server runs the one dynamic config the dev server of
// `npm start` and `npm test` gets (deploy/temporal/dynamic-config.yaml), on a version with Task Queue Fairness; the
// API and the worker get every secret config/production.ts requires, each one a required variable; README's Docker
// section lists them; the simulated PSP runs in the `sandbox` profile.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { loadConfig } from '../../config';
import { requiredSecrets } from '../../config/production';

const ROOT = path.resolve(__dirname, '../..');
const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), 'utf8');
const { startDevServer, dynamicConfigValues, DYNAMIC_CONFIG_FILE } = require('../../scripts/lib/temporal-server') as {
  startDevServer: (o: Record<string, unknown>) => Promise<unknown>;
  dynamicConfigValues: (file?: string) => string[];
  DYNAMIC_CONFIG_FILE: string;
};

interface Service {
  image?: string;
  ports?: string[];
  command?: string[];
  healthcheck?: { test: string[] };
  profiles?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
}
const compose = (text = read('docker-compose.yml')) =>
  YAML.parse(text, { merge: true }) as { services: Record<string, Service> };

/** Every `env.NAME` in the files that read the API's and the worker's settings (config/, each rail's, the keys). */
function settingsRead(): Set<string> {
  const rails = fs.readdirSync(path.join(ROOT, 'rails')).map((d) => `rails/${d}/config.ts`);
  const files = [
    'config/index.ts',
    ...rails.filter((f) => fs.existsSync(path.join(ROOT, f))),
    'services/signing-keys.ts',
  ];
  return new Set(files.flatMap((f) => [...read(f).matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)].map((m) => m[1])));
}

// Settings compose does not take from the shell or .env, and why; every other one reaches the API and the worker.
const NOT_PASSED: Record<string, string> = {
  HOST: 'the containers listen on every interface',
  PORT: "the API's port inside its container, where nginx sends requests: compose sets it on the api service",
  WORKFLOW_BUNDLE_PATH: 'the image sets it to the bundle it built from the same code',
  CRYPTO_HOT_WALLET_KEY: 'refused outside sandbox mode; CRYPTO_HOT_WALLET_KEY_FILE names a mounted file instead',
  EVM_SANDBOX_PAYER_KEY: "the sandbox chain's payer; compose runs no chain",
};

// Names that end like a secret's and hold none: payers see the Pix key, and METRICS_TOKEN is optional (unset,
// /metrics answers loopback clients only: decision 0114).
const NOT_SECRETS = new Set(['PIX_RECEIVING_KEY', 'METRICS_TOKEN']);

/** `${NAME:?message}`: compose refuses to start while NAME is unset or empty. */
const required = (name: string) => new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`);

/** The `--dynamic-config-value` pairs startDevServer (npm start's and npm test's) passes, read off a fake binary. */
async function devServerValues(): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-temporal-'));
  const argsFile = path.join(dir, 'args');
  const fake = path.join(dir, 'temporal');
  fs.writeFileSync(fake, `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\nexit 3\n`, { mode: 0o755 });
  try {
    const started = startDevServer({ temporal: fake, headless: true, port: 1, log: () => undefined, quiet: true });
    await started.then(
      () => expect.fail('the fake server cannot start'),
      () => undefined,
    );
    const args = read(path.relative(ROOT, argsFile)).split('\n');
    return args.flatMap((a, i) => (a === '--dynamic-config-value' ? [args[i + 1]] : []));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('docker-compose.yml', () => {
  const { services } = compose();
  const temporal = services.temporal;

  it('runs a Temporal server with Task Queue Fairness (1.31 or later), not the retired auto-setup image', () => {
    const m = /^temporalio\/server:(\d+)\.(\d+)\.(\d+)$/.exec(temporal.image ?? '');
    expect(m, `temporal's image: ${temporal.image}`).to.not.equal(null);
    expect(Number(m![1]) * 1000 + Number(m![2]), temporal.image).to.be.at.least(1031);
    const version = temporal.image!.split(':')[1];
    for (const [name, service] of Object.entries(services))
      if (service.image?.startsWith('temporalio/admin-tools'))
        expect(service.image, name).to.equal(`temporalio/admin-tools:${version}`);
    expect(JSON.stringify(services)).to.not.include('auto-setup');
  });

  it("mounts deploy/temporal/dynamic-config.yaml as the server's dynamic config", () => {
    const target = temporal.environment?.DYNAMIC_CONFIG_FILE_PATH;
    expect(target, 'DYNAMIC_CONFIG_FILE_PATH').to.be.a('string');
    const source = path.relative(ROOT, DYNAMIC_CONFIG_FILE);
    expect(temporal.volumes ?? []).to.include(`./${source}:${target}:ro`);
  });

  it('the dynamic config turns fairness on, and is what the dev server of npm start and npm test gets', async () => {
    const values = dynamicConfigValues();
    expect(values).to.include.members(['matching.useNewMatcher=true', 'matching.enableFairness=true']);
    expect(values).to.include('matching.numTaskqueueWritePartitions=1');
    // Pollers read only the partition tasks are written to: none is forwarded from an empty one (decision 0364).
    expect(values).to.include('matching.numTaskqueueReadPartitions=1');
    expect(await devServerValues()).to.deep.equal(values);
    expect(read('scripts/start.js')).to.match(/startDevServer\(/);
    // No other list of values beside the file: the scripts pass only what it says.
    for (const file of fs.readdirSync(path.join(ROOT, 'scripts/lib')).map((f) => `scripts/lib/${f}`))
      expect(read(file), file).to.not.match(/matching\.enableFairness|timerProcessorMaxTimeShift/);
  });

  it('a dynamic config value the dev server cannot take is an error, not a silent drop', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dynamic-config-'));
    const file = path.join(dir, 'dc.yaml');
    try {
      fs.writeFileSync(file, 'matching.enableFairness:\n  - value: true\n    constraints:\n      namespace: default\n');
      expect(() => dynamicConfigValues(file)).to.throw('matching.enableFairness must be one "- value: ..."');
      fs.writeFileSync(file, 'history.timerProcessorMaxTimeShift:\n  - value: 10ms\n');
      expect(dynamicConfigValues(file)).to.deep.equal(['history.timerProcessorMaxTimeShift="10ms"']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives the API and the worker every secret required outside sandbox, each a required variable', () => {
    const names = requiredSecrets({ PIX_PSP_URL: 'https://psp.example' });
    expect(names).to.include.members(['PIX_WEBHOOK_TOKEN', 'JWT_PRIVATE_KEY', 'AUDIT_KEY', 'PIX_CLIENT_SECRET']);
    for (const service of ['api', 'worker'])
      for (const name of names)
        expect(services[service].environment?.[name], `${service} ${name}`).to.match(required(name));
  });

  it('writes every secret it needs as a required variable, with no password of its own', () => {
    const text = read('docker-compose.yml');
    for (const m of text.matchAll(/\$\{([A-Z][A-Z0-9_]*)([^}]*)\}/g))
      // A name ending in one of these words holds a secret; one that only contains it does not: a *_FILE names where
      // a key is mounted (mTLS keys, the hot wallet's), an EVM_TOKEN_* is a contract address, JWT_KEY_ID a kid.
      if (/(SECRET|TOKEN|KEY|PASSWORD)$/.test(m[1]) && !NOT_SECRETS.has(m[1]))
        expect(m[2], `\${${m[1]}${m[2]}}`).to.match(/^:\?./);
    expect(services.postgres.environment?.POSTGRES_PASSWORD).to.match(required('POSTGRES_PASSWORD'));
    expect(text).to.not.match(/postgres:postgres@|PASSWORD: postgres|PWD: postgres/);
  });

  it("README's Docker section lists every variable compose requires", () => {
    const readme = read('README.md');
    const start = readme.indexOf('\n## Docker\n');
    expect(start, 'README has a "## Docker" section').to.be.greaterThan(-1);
    const end = readme.indexOf('\n## ', start + 1);
    const section = readme.slice(start, end < 0 ? undefined : end);
    const requiredNames = new Set([...read('docker-compose.yml').matchAll(/\$\{([A-Z_]+):\?/g)].map((m) => m[1]));
    expect(requiredNames.size).to.be.at.least(8);
    for (const name of requiredNames) expect(section, name).to.include(`\`${name}\``);
  });

  it('runs the simulated PSP in the sandbox profile, where the API and the worker find it', () => {
    const sim = services['psp-simulator'];
    expect(sim.profiles).to.deep.equal(['sandbox']);
    const url = `http://psp-simulator:${sim.environment?.PSP_SIM_PORT}`;
    for (const service of ['api', 'worker']) {
      // API Pix under /api, its token at the origin (psp-simulator/api-pix/layout.ts).
      expect(services[service].environment?.PIX_SANDBOX_PSP_URL, service).to.equal(`${url}/api`);
      expect(services[service].profiles, `${service} runs in every profile`).to.equal(undefined);
    }
  });

  it('calls Postgres healthy once it accepts TCP connections, not during the socket-only init of a new volume', () => {
    // On a new volume the image's entrypoint runs a temporary server with listen_addresses='' (Unix socket only),
    // then restarts it: a pg_isready over the socket answers "accepting connections" in between, and the migration
    // and Temporal's schema step, which connect to postgres:5432 once, failed with ECONNREFUSED.
    const test = services.postgres.healthcheck?.test.join(' ') ?? '';
    expect(test).to.match(/pg_isready/);
    expect(test).to.match(/ -h (127\.0\.0\.1|localhost)\b/);
  });

  it('passes every setting the API and the worker read to both, from the shell or .env', () => {
    // A setting left out never reached the containers: RATES_SOURCES (every quote between currencies 503
    // RATES_UNAVAILABLE outside sandbox mode), PIX_RECEIVING_KEY (the PSP's charges and webhook on a published key).
    const names = settingsRead();
    expect([...names]).to.include.members(['RATES_SOURCES', 'PIX_RECEIVING_KEY', 'TED_ACCOUNT_ID', 'JWT_KEY_ID']);
    for (const name of Object.keys(NOT_PASSED)) expect(names.has(name), `NOT_PASSED ${name}`).to.equal(true);
    for (const service of ['api', 'worker']) {
      const env = services[service].environment ?? {};
      const missing = [...names].filter((n) => !(n in env) && !(n in NOT_PASSED)).sort();
      expect(missing, `${service} lacks`).to.deep.equal([]);
      for (const name of Object.keys(NOT_PASSED))
        if (name !== 'PORT' || service !== 'api') expect(env, service).to.not.have.property(name);
    }
  });

  it("an empty value it passes reads as unset, and a default it writes is the code's own", () => {
    const base = loadConfig({});
    // Its own on purpose: the PSP's notices reach the API through the load balancer.
    const ownDefaults = new Set(['PUBLIC_BASE_URL']);
    let checked = 0;
    for (const [name, value] of Object.entries(services.api.environment ?? {})) {
      const m = /^\$\{([A-Z][A-Z0-9_]*)(:?-)(.*)\}$/.exec(value);
      if (!m || ownDefaults.has(name)) continue;
      expect(m[1], `${name} reads its own variable`).to.equal(name);
      // `:-`: the value when the variable is unset or empty; `-`: only when unset (an empty value is passed).
      const passed = m[3];
      expect(loadConfig({ [name]: passed }), `${name}=${JSON.stringify(passed)}`).to.deep.equal(base);
      if (m[2] === '-') expect(loadConfig({ [name]: '' }), `${name} empty`).to.not.deep.equal(base);
      checked++;
    }
    expect(checked).to.be.greaterThan(40);
  });

  it("the API reads each client's address from its nginx, the only way in, not nginx's own for all", () => {
    // Without TRUST_PROXY every client had nginx's address: 30 failed token requests a minute from anyone made
    // every customer's token request 429 (decision 0053), and forged PIX notices spent the PSP's own budget.
    expect(services.api.environment?.TRUST_PROXY).to.equal('true');
    expect(services.api).to.not.have.property('ports');
    const nginx = read('deploy/nginx.conf');
    // The last X-Forwarded-For entry (the one Cambio reads) is the peer nginx saw.
    expect(nginx).to.match(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
    expect(nginx).to.match(/proxy_set_header X-Forwarded-Host \$http_host;/);
  });

  it("gives Postgres the connections its Cambio processes and Temporal's services may open together", () => {
    // docs/operations.md, "Scale-out": each API or worker process opens up to 22, plus one process for migrations
    // and the CLI. Temporal's server runs four services, each with its own pools (SQL_MAX_CONNS 20, visibility 10).
    const perProcess = 22;
    const temporalServer = 4 * (20 + 10);
    const header = /--scale api=(\d+) --scale worker=(\d+)/.exec(read('docker-compose.yml'));
    expect(header, "the header's scale-out example").to.not.equal(null);
    const processes = Number(header![1]) + Number(header![2]) + 1;
    const command = (services.postgres.command ?? []).join(' ');
    const max = Number(/max_connections=(\d+)/.exec(command)?.[1] ?? 100);
    expect(max, `postgres ${command}`).to.be.at.least(processes * perProcess + temporalServer);
  });

  it("runs the API and the worker as a login of cambio_app, and only the migration as the tables' owner", () => {
    // As Postgres' superuser, a compromised API or worker could drop a trigger or rewrite the append-only audit log
    // (decision 0070); the migration makes DATABASE_URL's login a member of cambio_app when it is given both URLs.
    const userOf = (url: string) => decodeURIComponent(new URL(url.replace(/\$\{[^}]*\}/g, 'x')).username);
    for (const service of ['api', 'worker']) {
      const env = services[service].environment ?? {};
      expect(userOf(env.DATABASE_URL), `${service} DATABASE_URL`).to.not.equal('postgres');
      expect(env.DATABASE_URL, service).to.match(
        /^postgres:\/\/[a-z_]+:\$\{CAMBIO_DB_PASSWORD:\?[^}]+\}@postgres:5432\//,
      );
      expect(env, service).to.not.have.property('MIGRATION_DATABASE_URL');
    }
    const migrate = services.migrate.environment ?? {};
    expect(userOf(migrate.MIGRATION_DATABASE_URL ?? ''), 'migrate MIGRATION_DATABASE_URL').to.equal('postgres');
    expect(migrate.DATABASE_URL).to.equal(services.api.environment?.DATABASE_URL);
  });

  it('the checks can fail: a compose file without the dynamic config or a secret does not pass', () => {
    const text = read('docker-compose.yml')
      .replace(/\n {6}DYNAMIC_CONFIG_FILE_PATH: .*/, '')
      .replace(/\n {4}AUDIT_KEY: .*/, '');
    const broken = compose(text).services;
    expect(broken.temporal.environment?.DYNAMIC_CONFIG_FILE_PATH).to.equal(undefined);
    expect(broken.api.environment?.AUDIT_KEY).to.equal(undefined);
  });
});
