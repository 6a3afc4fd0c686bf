// Production honesty (docs/decisions/0080): no code path completes a withdrawal without the PSP's REALIZADO.
// Reads the production source (everything but the simulated PSP, the tests and the benchmarks) for the shapes a
// payout that "succeeds" on its own takes, the old `executePayout` stub's among them; the last case puts that stub
// back into activities/operations/withdrawal.ts and checks that the scan finds it.
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const NOT_PRODUCTION = new Set(['node_modules', 'dist', '.git', '.cambio', '.tools', 'test', 'psp-simulator', 'bench']);
const CODE = /\.(ts|js|mjs|cjs)$/;

interface Source {
  file: string;
  text: string;
}

function productionSources(dir = ROOT): Source[] {
  const out: Source[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!(dir === ROOT && NOT_PRODUCTION.has(entry.name)) && entry.name !== 'node_modules') {
        out.push(...productionSources(full));
      }
    } else if (CODE.test(entry.name)) {
      out.push({ file: path.relative(ROOT, full), text: readFileSync(full, 'utf8') });
    }
  }
  return out;
}

const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** The name of the function (method, function or arrow assigned to a name) whose text encloses `index`. */
function enclosingFunction(text: string, index: number): { name: string; body: string } {
  const header =
    /(?:async\s+)?(?:function\s+)?([A-Za-z_$][\w$]*)\s*(?:=\s*(?:async\s*)?)?\([^()]*(?:\([^()]*\)[^()]*)*\)\s*(?::[^{=]+)?(?:=>\s*)?\{/g;
  let found = { name: '', start: 0 };
  for (let m = header.exec(text); m && m.index < index; m = header.exec(text)) {
    if (!['if', 'for', 'while', 'switch', 'catch', 'return', 'async', 'function'].includes(m[1]))
      found = { name: m[1], start: m.index };
  }
  return { name: found.name, body: text.slice(found.start, index) };
}

// Where the PSP's answer is read: a payout's outcome must come after one of these, in the same function.
const PSP_CALL = /\b(?:pixSendPayout|pixPayoutStatus|sendPayout|payoutStatus)\s*\(/;

/** Every place that could complete a payout without the PSP saying so, as `file:line reason`. */
function payoutsWithoutPsp(sources: Source[]): string[] {
  const findings: string[] = [];
  for (const { file, text } of sources) {
    const at = (i: number, why: string) => findings.push(`${file}:${lineOf(text, i)} ${why}`);
    // 1. Only the PSP decides a payout: the sandbox's failing key lives in the simulator, never in our code.
    for (const m of text.matchAll(/payout-fails@example\.com/g)) {
      at(m.index!, 'decides a payout by its key (the PSP decides; the failing key lives in the simulator)');
    }
    // 2. A payout's rail transaction (a DEBIT) is written by recordPayout only, which records what it is given.
    for (const m of text.matchAll(/direction:\s*'DEBIT'/g)) {
      const fn = enclosingFunction(text, m.index!);
      if (fn.name !== 'recordPayout') at(m.index!, `writes a DEBIT rail transaction in ${fn.name || '?'}`);
      else if (!/const ok = input\.status === 'COMPLETED'/.test(fn.body)) {
        at(m.index!, "recordPayout's outcome is not the status it was given");
      }
      if (fn.name === 'recordPayout' && !/endToEnd = input\.endToEnd\b/.test(fn.body)) {
        at(m.index!, "recordPayout's end-to-end id is not the PSP's");
      }
    }
    // 3. Every recordPayout call passes the PSP's status, or FAILED; after a PSP call in the same function.
    for (const m of text.matchAll(/\brecordPayout\(\s*\{([^}]*)\}/g)) {
      const status = /status:\s*([^,}\s]+)/.exec(m[1])?.[1] ?? '(none)';
      if (status !== 'state.status' && status !== "'FAILED'") at(m.index!, `records a payout as ${status}`);
      const fn = enclosingFunction(text, m.index!);
      if (status === 'state.status' && !PSP_CALL.test(fn.body)) at(m.index!, `${fn.name} records a status no PSP gave`);
    }
    // 4. A payout step that answers success on its own.
    for (const m of text.matchAll(/\bok:\s*true\b|\bconst ok = !\(/g)) {
      const fn = enclosingFunction(text, m.index!);
      if (/payout/i.test(fn.name)) at(m.index!, `${fn.name} makes up its outcome`);
    }
  }
  return findings;
}

// The stub as it was (activities/operations.ts before payouts went through the PSP).
const OLD_STUB = `
    async executePayout(input: { operationId: string }): Promise<{ ok: boolean; endToEnd: string }> {
      return inTx(async (em) => {
        const op = await lock(em, input.operationId);
        const existing = op.transactions.find((t) => t.direction === 'DEBIT');
        if (existing) return { ok: existing.status === 'COMPLETED', endToEnd: existing.endToEnd };
        const instruction = (op.intent.beneficiary as { paymentInstruction: { keyType: string; key: string } })
          .paymentInstruction;
        const ok = !(instruction.keyType === 'EMAIL' && instruction.key.toLowerCase() === 'payout-fails@example.com');
        const at = new Date();
        const endToEnd = endToEndId(op.id, at);
        op.transactions = [
          ...op.transactions,
          {
            id: randomUUID(),
            type: 'PIX',
            direction: 'DEBIT',
            amount: amount(op.targetAmount, op.targetAsset),
            status: ok ? 'COMPLETED' : 'FAILED',
            endToEnd,
            createdAt: at.toISOString(),
          },
        ];
        op.updatedAt = at;
        return { ok, endToEnd };
      });
    },
`;

describe('no payout completes without the PSP', () => {
  const sources = productionSources();

  it('scans the production source, the payout steps included', () => {
    const files = sources.map((s) => s.file);
    expect(files).to.include.members([
      'activities/operations/withdrawal.ts',
      'activities/rails.ts',
      'workflows/operations/payout.ts',
      'workflows/operations/withdrawal.ts',
    ]);
    expect(files.some((f) => f.startsWith('psp-simulator/') || f.startsWith('test/'))).to.equal(false);
  });

  it('finds no payout path that completes without a PSP answer', () => {
    expect(payoutsWithoutPsp(sources)).to.deep.equal([]);
  });

  it('would find the old stub if it came back', () => {
    const withStub = sources.map((s) => {
      if (s.file !== 'activities/operations/withdrawal.ts') return s;
      const start = s.text.indexOf('    async executePayout(');
      expect(start, 'executePayout is where the stub was').to.be.greaterThan(0);
      const end = s.text.indexOf('\n    },\n', start) + '\n    },\n'.length;
      return { ...s, text: s.text.slice(0, start) + OLD_STUB.slice(1) + s.text.slice(end) };
    });
    const findings = payoutsWithoutPsp(withStub);
    expect(findings.join('\n')).to.match(/decides a payout by its key/);
    expect(findings.join('\n')).to.match(/writes a DEBIT rail transaction in executePayout/);
    expect(findings.join('\n')).to.match(/executePayout makes up its outcome/);
  });

  it('would find a status read that is not the PSP', () => {
    const fn = (...lines: string[]) => ['async function payOut(id: string) {', ...lines, '}'].join('\n');
    const faked = [
      { file: 'workflows/x.ts', text: fn(`  return acts.recordPayout({ operationId: id, status: 'COMPLETED' });`) },
      {
        file: 'workflows/y.ts',
        text: fn(
          `  const state = { status: 'COMPLETED' };`,
          `  return acts.recordPayout({ operationId: id, status: state.status });`,
        ),
      },
    ];
    expect(payoutsWithoutPsp(faked)).to.deep.equal([
      "workflows/x.ts:2 records a payout as 'COMPLETED'",
      'workflows/y.ts:3 payOut records a status no PSP gave',
    ]);
  });
});
