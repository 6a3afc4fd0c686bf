// Anvil, the local EVM node of Foundry, from the @foundry-rs/anvil npm package: its binary ships in the platform
// package npm installed beside it (@foundry-rs/anvil-linux-amd64, ...), so nothing is downloaded at run time (the
// package's postinstall, a downloader for when that package is missing, is not allowed to run).
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const PLATFORM_PACKAGES: Record<string, Record<string, string>> = {
  linux: { x64: 'anvil-linux-amd64', arm64: 'anvil-linux-arm64' },
  darwin: { x64: 'anvil-darwin-amd64', arm64: 'anvil-darwin-arm64' },
  win32: { x64: 'anvil-win32-amd64' },
};

/** The anvil binary of this platform, from its npm package; throws naming the package when it is missing. */
export function anvilBinary(): string {
  const name = PLATFORM_PACKAGES[process.platform]?.[process.arch];
  if (!name) throw new Error(`anvil has no npm binary for ${process.platform}-${process.arch}`);
  let dir: string;
  try {
    dir = path.dirname(require.resolve(`@foundry-rs/${name}/package.json`));
  } catch {
    throw new Error(`@foundry-rs/${name} is not installed (npm install; it comes with @foundry-rs/anvil)`);
  }
  const binary = path.join(dir, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(binary)) throw new Error(`${binary} is missing from @foundry-rs/${name}`);
  return binary;
}

export interface AnvilOptions {
  /** 0: a free port, which anvil reports. */
  port?: number;
  chainId: number;
  /** A file anvil loads its chain from and saves it to on exit (npm start keeps the sandbox chain this way). */
  stateFile?: string;
  /** Seconds between blocks; unset: a block per transaction, and what `anvil_mine` mines. */
  blockTime?: number;
}

export interface AnvilProcess {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts anvil on loopback and resolves once it listens. */
export async function startAnvil(options: AnvilOptions): Promise<AnvilProcess> {
  const args = ['--host', '127.0.0.1', '--port', String(options.port ?? 0), '--chain-id', String(options.chainId)];
  if (options.stateFile) args.push('--state', options.stateFile);
  if (options.blockTime) args.push('--block-time', String(options.blockTime));
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`anvil did not start within 20 s: ${out.slice(-2000)}`)), 20_000);
    const read = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const found = /Listening on [^\s:]+:(\d+)/.exec(out);
      if (found) {
        clearTimeout(timer);
        resolve(Number(found[1]));
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`anvil exited (${code}): ${out.slice(-2000)}`));
    });
  });
  // Past the banner its output is one line per request: read and dropped, so the pipe never fills.
  child.stdout!.removeAllListeners('data').resume();
  child.stderr!.removeAllListeners('data').resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // SIGTERM: anvil saves its --state file on the way out.
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
