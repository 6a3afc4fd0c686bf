// How a bank writes a boleto's codes (FEBRABAN, Carta-Circular BCB 2.926/2000): the 44-digit barcode with its mod 11
// general check digit, the 47-digit digitable line with a mod 10 digit per field, the due-date factor (days since
// 1997-10-07, restarted at 1000 on 2025-02-22), and the Pix BR Code a bolepix carries. The bank's own arithmetic: the
// simulator imports nothing of Cambio's.

const DAY_MS = 86_400_000;
const FACTOR_BASE = Date.UTC(1997, 9, 7);
const FACTOR_RESTART = Date.UTC(2025, 1, 22);
// Banco Inter's COMPE code, and the real's currency digit.
const BANK = '077';
const CURRENCY = '9';

export function factorOf(dueDate: string): string {
  const day = Date.parse(`${dueDate}T00:00:00Z`);
  const f =
    day >= FACTOR_RESTART
      ? 1000 + (Math.round((day - FACTOR_RESTART) / DAY_MS) % 9000)
      : Math.round((day - FACTOR_BASE) / DAY_MS);
  return String(f).padStart(4, '0');
}

function mod11(digits: string): string {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i--) {
    sum += Number(digits[i]) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const dv = 11 - (sum % 11);
  return dv === 0 || dv === 10 || dv === 11 ? '1' : String(dv);
}

function mod10(digits: string): string {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i--) {
    const p = Number(digits[i]) * weight;
    sum += Math.floor(p / 10) + (p % 10);
    weight = weight === 2 ? 1 : 2;
  }
  return String((10 - (sum % 10)) % 10);
}

/** The barcode and digitable line of a boleto: `freeField` is the bank's 25 digits (agency, nossoNumero...). */
export function boletoCodes(amount: string, dueDate: string, freeField: string) {
  const [reais, centavos = '00'] = amount.split('.');
  const value = `${reais}${centavos.padEnd(2, '0')}`.padStart(10, '0');
  const head = `${BANK}${CURRENCY}`;
  const rest = `${factorOf(dueDate)}${value}${freeField}`;
  const barcode = `${head}${mod11(head + rest)}${rest}`;
  const f1 = `${head}${freeField.slice(0, 5)}`;
  const f2 = freeField.slice(5, 15);
  const f3 = freeField.slice(15, 25);
  const digitableLine = `${f1}${mod10(f1)}${f2}${mod10(f2)}${f3}${mod10(f3)}${barcode[4]}${barcode.slice(5, 19)}`;
  return { barcode, digitableLine };
}

const emv = (id: string, value: string) => `${id}${String(value.length).padStart(2, '0')}${value}`;

function crc16(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** A dynamic Pix BR Code for the bolepix's Pix charge at `location`. */
export function brCode(location: string, amount: string): string {
  const body =
    emv('00', '01') +
    emv('01', '12') +
    emv('26', emv('00', 'br.gov.bcb.pix') + emv('25', location)) +
    emv('52', '0000') +
    emv('53', '986') +
    emv('54', amount) +
    emv('58', 'BR') +
    emv('59', 'CAMBIO') +
    emv('60', 'SAO PAULO') +
    emv('62', emv('05', '***')) +
    '6304';
  return body + crc16(body);
}
