// config/production.ts: outside sandbox mode each secret must be set and must not be a value Cambio publishes; every
// value the code and the docs print for those variables is in its list.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../config';
import { assertSecretsSet, PUBLISHED_SECRET_VALUES, requiredSecrets, unsafeSecrets } from '../../config/production';
import { pixPspUrl } from '../../rails/pix/config';
import { SANDBOX_AUDIT_KEY } from '../../cli/audit-key';

const ROOT = path.resolve(__dirname, '../..');
const OWN = {
  PIX_WEBHOOK_TOKEN: 'f3a1c0de9b8e7d6c5b4a39281706f5e4',
  JWT_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----\n(this deployment)\n-----END PRIVATE KEY-----',
  JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\n(this deployment)\n-----END PUBLIC KEY-----',
  WEBHOOK_SECRET_KEY: '0c8e6f4d2b0a99887766554433221100',
  AUDIT_KEY: 'b7e15162a0f3c4d5e6f708192a3b4c5d',
  CURSOR_SECRET: '9a8b7c6d5e4f30211203f4e5d6c7b8a9',
};
const SECRETS = Object.keys(OWN);

describe('secrets outside sandbox mode (config/production.ts)', () => {
  it('names every secret that is unset or empty, and the PSP client secret only with a PSP', () => {
    expect(unsafeSecrets({})).to.deep.equal(SECRETS.map((name) => ({ name, problem: 'unset' })));
    expect(unsafeSecrets({ ...OWN, CURSOR_SECRET: '  ' })).to.deep.equal([{ name: 'CURSOR_SECRET', problem: 'unset' }]);
    expect(unsafeSecrets(OWN)).to.deep.equal([]);
    expect(requiredSecrets({})).to.not.include('PIX_CLIENT_SECRET');
    expect(unsafeSecrets({ ...OWN, PIX_PSP_URL: 'https://psp.example' })).to.deep.equal([
      { name: 'PIX_CLIENT_SECRET', problem: 'unset' },
    ]);
    expect(unsafeSecrets({ ...OWN, PIX_PSP_URL: 'https://psp.example', PIX_CLIENT_SECRET: 'from the bank' })).to.eql(
      [],
    );
  });

  it('refuses every published value in every secret variable, the defaults of config/index.ts among them', () => {
    const config = loadConfig({});
    const defaults = [config.webhookSecretKey, config.cursorSecret, config.pix.webhookToken, config.pix.clientSecret];
    for (const value of [...defaults, SANDBOX_AUDIT_KEY]) expect(PUBLISHED_SECRET_VALUES).to.include(value);
    for (const name of [...SECRETS, 'PIX_CLIENT_SECRET'])
      for (const value of PUBLISHED_SECRET_VALUES) {
        const env = { ...OWN, PIX_PSP_URL: 'https://psp.example', PIX_CLIENT_SECRET: 'from the bank', [name]: value };
        expect(unsafeSecrets(env), `${name}=${value}`).to.deep.equal([{ name, problem: 'published' }]);
      }
  });

  it('checks nothing in sandbox mode', () => {
    for (const SANDBOX of ['true', '1', 'yes', 'on', 'TRUE']) expect(unsafeSecrets({ SANDBOX })).to.deep.equal([]);
    for (const SANDBOX of ['false', '0', '', 'off']) expect(unsafeSecrets({ SANDBOX })).to.have.length(SECRETS.length);
  });

  it('one message names them all', () => {
    const env = { ...OWN, JWT_PUBLIC_KEY: '', WEBHOOK_SECRET_KEY: 'cambio-dev-webhook-secret-key' };
    expect(() => assertSecretsSet('API', OWN)).to.not.throw();
    expect(() => assertSecretsSet('worker', env)).to.throw(
      'The worker does not start outside sandbox mode while a secret is unset or public: JWT_PUBLIC_KEY (unset), ' +
        'WEBHOOK_SECRET_KEY (a value published in Cambio).',
    );
  });

  it('every value the docs, the README, compose and the code print for a secret variable is in the list', () => {
    const names = [...SECRETS, 'PIX_CLIENT_SECRET', 'PSP_SIM_CLIENT_SECRET'].join('|');
    const files = ['README.md', 'docker-compose.yml', 'config/index.ts', 'psp-simulator/main.ts', 'bench/lib/stack.ts'];
    for (const dir of ['docs'])
      for (const f of fs.readdirSync(path.join(ROOT, dir))) if (f.endsWith('.md')) files.push(path.join(dir, f));
    const printed = new Map<string, string>();
    for (const file of files) {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      // `NAME=value` in a shell line, `NAME: 'value'` in code or YAML, `env.NAME || 'value'` as a default.
      const shapes = [
        new RegExp(`\\b(?:${names})=([^\\s\`'"$\\\\]+)`, 'g'),
        new RegExp(`\\b(?:${names}):\\s*'([^'$]+)'`, 'g'),
        new RegExp(`env\\.(?:${names})\\s*\\|\\|\\s*'([^']+)'`, 'g'),
      ];
      for (const shape of shapes) for (const m of text.matchAll(shape)) printed.set(m[1], file);
      // docs/configuration.md's tables: the Default column of a secret's row.
      for (const line of text.split('\n')) {
        // A row may list several variables and their defaults in the same order; a default that names another
        // variable (the simulator's `PIX_CLIENT_SECRET`) is not a value.
        const cells = line.split('|').map((c) => c.trim());
        if (cells.length < 4) continue;
        const vars = [...cells[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]);
        const values = [...cells[2].matchAll(/`([^`]+)`/g)].map((m) => m[1]);
        vars.forEach((name, i) => {
          const value = values[i];
          if (new RegExp(`^(?:${names})$`).test(name) && value && !/^[A-Z][A-Z0-9_]*$/.test(value))
            printed.set(value, file);
        });
      }
    }
    const missing = [...printed].filter(([value]) => !PUBLISHED_SECRET_VALUES.includes(value));
    expect(missing, 'printed for a secret but not refused by config/production.ts').to.deep.equal([]);
    expect(printed.size, 'the scan finds the defaults').to.be.at.least(4);
  });

  it('falls back to the simulated PSP in sandbox mode only', () => {
    const sim = { PIX_SANDBOX_PSP_URL: 'http://psp-simulator:4010' };
    expect(pixPspUrl({ ...sim, SANDBOX: 'true' })).to.equal('http://psp-simulator:4010');
    expect(pixPspUrl({ ...sim, SANDBOX: 'false' })).to.equal(undefined);
    expect(pixPspUrl({ ...sim })).to.equal(undefined);
    expect(pixPspUrl({ ...sim, SANDBOX: 'true', PIX_PSP_URL: 'https://psp.example' })).to.equal('https://psp.example');
    expect(loadConfig({ ...sim, SANDBOX: 'true' }).pix.pspUrl).to.equal('http://psp-simulator:4010');
    expect(loadConfig({ ...sim }).pix.pspUrl).to.equal(undefined);
  });
});
