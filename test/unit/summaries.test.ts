import { expect } from 'chai';
import { clampSummary, operationSummary, SUMMARY_MAX_JSON_BYTES } from '../../domain/summaries';
import { Dec } from '../../domain/money';

const jsonBytes = (s: string) => Buffer.byteLength(JSON.stringify(s));

describe('domain/summaries: a workflow summary a Temporal server takes', () => {
  it('leaves a summary that fits as it is', () => {
    const summary = 'TRANSFER 10.00 BRL from Acme Ltda to Beta SA';
    expect(clampSummary(summary)).to.equal(summary);
  });

  it("cuts a transfer between two 200-character legal names of 3-byte characters to the server's budget", () => {
    const name = (c: string) => c.repeat(200);
    const summary = operationSummary({
      type: 'TRANSFER',
      intent: { targetAccount: { owner: name('語') } },
      accountOwner: name('ç'),
      sourceAsset: 'BRL',
      sourceAmount: new Dec('10'),
      targetAsset: 'BRL',
      targetAmount: new Dec('10'),
    });
    expect(jsonBytes(summary)).to.be.above(1000);
    const cut = clampSummary(summary);
    expect(jsonBytes(cut)).to.be.at.most(SUMMARY_MAX_JSON_BYTES);
    expect(cut.startsWith('TRANSFER 10.00 BRL from ççç')).to.equal(true);
    expect(cut.endsWith('\u2026')).to.equal(true);
  });

  it('counts JSON escapes and never splits a character in two', () => {
    const cut = clampSummary('"\\\n'.repeat(100) + '😀'.repeat(100), 60);
    expect(jsonBytes(cut)).to.be.at.most(60);
    const emoji = clampSummary('😀'.repeat(100), 30);
    expect(jsonBytes(emoji)).to.be.at.most(30);
    expect([...emoji].slice(0, -1).every((c) => c === '😀')).to.equal(true);
  });
});

describe('domain/summaries: a withdrawal names the rail it pays through', () => {
  const withdrawal = (rail: string, keyType: string, key: string, asset: string, value: string) =>
    operationSummary({
      type: 'WITHDRAWAL',
      intent: {
        beneficiary: {
          holder: { type: 'INDIVIDUAL', firstName: 'Maria', lastName: 'Silva' },
          paymentInstruction: { rail, keyType, key },
        },
      },
      accountOwner: 'Acme Ltda',
      sourceAsset: asset,
      sourceAmount: new Dec(value),
      targetAsset: asset,
      targetAmount: new Dec(value),
    });

  // An operator reading the Temporal UI's list was told a WALLET payout of USDC left "via PIX".
  it('says CRYPTO for a WALLET payout and PIX_KEY for a DICT key, as a deposit names its rail', () => {
    const address = '0x52908400098527886E0F7030069857D2E4169EE7';
    expect(withdrawal('CRYPTO', 'WALLET', address, 'USDC', '100')).to.equal(
      'WITHDRAWAL 100.000000 USDC via CRYPTO from Acme Ltda to Maria Silva',
    );
    expect(withdrawal('PIX_KEY', 'EMAIL', 'maria@example.com', 'BRL', '100')).to.equal(
      'WITHDRAWAL 100.00 BRL via PIX_KEY from Acme Ltda to Maria Silva',
    );
  });
});
