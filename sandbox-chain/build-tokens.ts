// `npm run build:tokens`: compiles token/SandboxToken.sol with solc-js (the compiler ships in the npm package;
// nothing is downloaded) into token/SandboxToken.json, the ABI and bytecode the sandbox chain deploys. The JSON is
// committed, so neither `npm start` nor the tests compile anything; run this after changing the source.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
// solc-js has no type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const solc = require('solc') as { compile(input: string): string; version(): string };

const DIR = path.join(__dirname, 'token');
const SOURCE = 'SandboxToken.sol';

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

function main(): void {
  const input = {
    language: 'Solidity',
    sources: { [SOURCE]: { content: readFileSync(path.join(DIR, SOURCE), 'utf8') } },
    settings: {
      optimizer: { enabled: true, runs: 200 },
      // Paris: no PUSH0, so the bytecode also deploys on chains that are a fork or two behind.
      evmVersion: 'paris',
      outputSelection: { '*': { SandboxToken: ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const contract = output.contracts[SOURCE].SandboxToken;
  const artifact = { compiler: solc.version(), abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
  writeFileSync(path.join(DIR, 'SandboxToken.json'), `${JSON.stringify(artifact, null, 2)}\n`);
  console.log(`token/SandboxToken.json written (solc ${solc.version()})`);
}

main();
