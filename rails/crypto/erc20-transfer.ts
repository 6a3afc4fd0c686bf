// ERC-20's Transfer event as a token logs it, and nothing else read as one (decision 0308). A token's address emits
// whatever its code says: a log whose first topic is Transfer's signature can still be ERC-721's shape (the value
// indexed, no data), have its data cut short or padded, or carry an address topic with bits above its 20 bytes. viem
// decodes what it can of such a log (even with `strict`: it reads an address from a topic's last 20 bytes and the
// value from the data's first 32), so a reader that trusts its decoding can find no value (and stop, or treat it as
// zero) or a payee the log does not name. The scanner, a return's check, the operator's record check and a taken
// nonce's answer all read transfers here, by one rule.
import { getAddress, toEventSelector } from 'viem';

export interface Erc20Transfer {
  from: `0x${string}`;
  to: `0x${string}`;
  value: bigint;
}

/** What a log is, as a node answers it. */
export interface RawLog {
  data: `0x${string}`;
  topics: readonly `0x${string}`[];
}

const TRANSFER_SELECTOR = toEventSelector('Transfer(address,address,uint256)');

/** An address as an indexed topic: 32 bytes, the 12 above the address zero. */
const ADDRESS_TOPIC = /^0x0{24}([0-9a-f]{40})$/i;

/** A uint256 as data: exactly 32 bytes. */
const VALUE_DATA = /^0x[0-9a-f]{64}$/i;

/** `log` as ERC-20's Transfer (signature, `from` and `to` as topics, the value as 32 bytes of data), or undefined. */
export function erc20Transfer(log: RawLog): Erc20Transfer | undefined {
  if (log.topics.length !== 3 || log.topics[0]?.toLowerCase() !== TRANSFER_SELECTOR) return undefined;
  const from = ADDRESS_TOPIC.exec(log.topics[1]);
  const to = ADDRESS_TOPIC.exec(log.topics[2]);
  if (!from || !to || !VALUE_DATA.test(log.data)) return undefined;
  return { from: getAddress(`0x${from[1]}`), to: getAddress(`0x${to[1]}`), value: BigInt(log.data) };
}
