// The secrets of the test run: random, made once per mocha process and set in its environment before anything reads
// it, so the in-process stack and every API, worker and CLI process a test spawns share them. Outside sandbox mode
// the API and the worker refuse a secret that is unset or published (config/production.ts); none of these is
// written anywhere, so a test may turn SANDBOX off without setting secrets of its own.
import { generateKeyPairSync, randomBytes } from 'node:crypto';

const random = () => randomBytes(32).toString('hex');

let pair: { privateKey: string; publicKey: string } | undefined;
/** One RSA key pair per run (PEM): the token signing key of every process. */
function signingPair() {
  pair ??= generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return pair;
}

/** Sets each secret variable the run's shell did not set. */
export function setRunSecrets(env: NodeJS.ProcessEnv = process.env): void {
  env.PIX_WEBHOOK_TOKEN ||= random();
  env.BOLETO_WEBHOOK_TOKEN ||= random();
  env.WEBHOOK_SECRET_KEY ||= random();
  env.CURSOR_SECRET ||= random();
  env.AUDIT_KEY ||= random();
  if (!env.JWT_PRIVATE_KEY || !env.JWT_PUBLIC_KEY) {
    env.JWT_PRIVATE_KEY = signingPair().privateKey;
    env.JWT_PUBLIC_KEY = signingPair().publicKey;
  }
}
