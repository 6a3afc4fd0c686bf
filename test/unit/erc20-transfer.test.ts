import { expect } from 'chai';
import { decodeEventLog, erc20Abi, numberToHex, pad, toEventSelector, type Hex } from 'viem';
import { erc20Transfer, type RawLog } from '../../rails/crypto/erc20-transfer';

describe('CRYPTO rail: what is read as an ERC-20 Transfer', () => {
  const selector = toEventSelector('Transfer(address,address,uint256)');
  const payer = '0x1111111111111111111111111111111111111111';
  const payee = '0x2222222222222222222222222222222222222222';
  const topic = (a: Hex) => pad(a, { size: 32 });
  const value = (units: bigint, bytes = 32) => numberToHex(units, { size: bytes });
  const erc20 = (over: Partial<RawLog> = {}): RawLog => ({
    topics: [selector, topic(payer), topic(payee)],
    data: value(7_000_000n),
    ...over,
  });

  it('reads the signature, from and to as topics and a 32-byte value', () => {
    expect(erc20Transfer(erc20())).to.deep.equal({ from: payer, to: payee, value: 7_000_000n });
    // A node may answer the hex in capitals: the same transfer.
    const shouted = erc20({
      topics: [selector.toUpperCase().replace('0X', '0x'), topic(payer), topic(payee)] as Hex[],
      data: value(255n).toUpperCase().replace('0X', '0x') as Hex,
    });
    expect(erc20Transfer(shouted)).to.deep.equal({ from: payer, to: payee, value: 255n });
  });

  it('reads nothing from a log of another shape, where the ABI decoder finds a payee or a value anyway', () => {
    const misshapen: Array<[string, RawLog]> = [
      [
        "ERC-721's shape: the value a fourth topic, no data",
        erc20({ topics: [...erc20().topics, topic('0x07')], data: '0x' }),
      ],
      ['no data', erc20({ data: '0x' })],
      ['a value cut short', erc20({ data: value(3_000_000n, 16) })],
      ['a value padded past 32 bytes', erc20({ data: value(3_000_000n, 64) })],
      ['an odd digit of data', erc20({ data: `${value(1n)}0` as Hex })],
      [
        '`to` not indexed',
        erc20({ topics: [selector, topic(payer)], data: `${topic(payee)}${value(1n).slice(2)}` as Hex }),
      ],
      [
        'bits above the address in `to`',
        erc20({ topics: [selector, topic(payer), `0xff${topic(payee).slice(4)}` as Hex] }),
      ],
      [
        'bits above the address in `from`',
        erc20({ topics: [selector, `0x01${topic(payer).slice(4)}` as Hex, topic(payee)] }),
      ],
      [
        'another event (Approval)',
        erc20({ topics: [toEventSelector('Approval(address,address,uint256)'), topic(payer), topic(payee)] }),
      ],
      ['no topics', erc20({ topics: [] })],
    ];
    for (const [shape, log] of misshapen) expect(erc20Transfer(log), shape).to.equal(undefined);
    // What viem's own decoder, strict, which the readers used before, makes of two of them: a payee from the 20 low
    // bytes of a dirty topic, a value from the first 32 bytes of padded data.
    const decoded = (log: RawLog) =>
      decodeEventLog({ abi: erc20Abi, strict: true, data: log.data, topics: log.topics as never }).args;
    expect(decoded(misshapen[6][1])).to.deep.include({ to: payee });
    expect(decoded(misshapen[3][1])).to.deep.include({ value: 0n });
  });
});
