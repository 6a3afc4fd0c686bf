import { expect } from 'chai';
import fc from 'fast-check';
import {
  cnpjCheckDigits,
  cpfCheckDigits,
  isValidCnpj,
  isValidCpf,
  isValidTaxId,
  bareTaxId,
  normalizeTaxId,
} from '../../domain/tax-id';

const DIGITS = '0123456789'.split('');
const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');

const fixed = (chars: string[], length: number) =>
  fc.array(fc.constantFrom(...chars), { minLength: length, maxLength: length }).map((a) => a.join(''));
// A repeated character is rejected by design, so generators of "valid" ids exclude it.
const notAllSame = (s: string) => s.split('').some((c) => c !== s[0]);

const cpfBase = fixed(DIGITS, 9).filter(notAllSame);
const cnpjBase = fixed(ALNUM, 12).filter(notAllSame);

const formatCpf = (bare: string) => `${bare.slice(0, 3)}.${bare.slice(3, 6)}.${bare.slice(6, 9)}-${bare.slice(9)}`;
const formatCnpj = (bare: string) =>
  `${bare.slice(0, 2)}.${bare.slice(2, 5)}.${bare.slice(5, 8)}/${bare.slice(8, 12)}-${bare.slice(12)}`;

// Replace the digit at `index` with a different digit.
const bumpDigit = (s: string, index: number, delta: number) =>
  s.slice(0, index) + String((Number(s[index]) + delta) % 10) + s.slice(index + 1);

// Independent oracles, written the way the check digits are usually described rather than the
// way domain/tax-id.ts computes them, so a shared mistake is unlikely.
function referenceCpfDigits(base9: string): string {
  const digits = base9.split('').map(Number);
  for (let round = 0; round < 2; round++) {
    // The folk formula: (Σ dᵢ·wᵢ · 10) mod 11 mod 10, weights counting down to 2.
    const n = digits.length;
    const sum = digits.reduce((acc, d, i) => acc + d * (n + 1 - i), 0);
    digits.push(((sum * 10) % 11) % 10);
  }
  return digits.slice(9).join('');
}
function referenceCnpjDigits(base12: string): string {
  const values = base12.split('').map((c) => c.charCodeAt(0) - 48);
  for (let round = 0; round < 2; round++) {
    // Weights are 2,3,…,9,2,3,… assigned from the rightmost character leftwards.
    const sum = values.reduceRight((acc, v, i) => acc + v * (((values.length - 1 - i) % 8) + 2), 0);
    const r = sum % 11;
    values.push(r < 2 ? 0 : 11 - r);
  }
  return values.slice(12).join('');
}

describe('tax-id', () => {
  describe('cpfCheckDigits', () => {
    it('computes known check digits', () => {
      expect(cpfCheckDigits('529982247')).to.equal('25');
      expect(cpfCheckDigits('111444777')).to.equal('35');
      expect(cpfCheckDigits('123456789')).to.equal('09');
    });

    it('rejects a base that is not 9 digits', () => {
      expect(() => cpfCheckDigits('52998224')).to.throw(RangeError);
      expect(() => cpfCheckDigits('5299822470')).to.throw(RangeError);
      expect(() => cpfCheckDigits('52998224A')).to.throw(RangeError);
    });

    it('agrees with the (Σ·10 mod 11 mod 10) reference formula', () => {
      fc.assert(fc.property(fixed(DIGITS, 9), (base) => cpfCheckDigits(base) === referenceCpfDigits(base)));
    });
  });

  describe('cnpjCheckDigits', () => {
    it('computes the check digits of the classic numeric example', () => {
      expect(cnpjCheckDigits('112223330001')).to.equal('81');
    });

    it('computes 35 for the Receita Federal alphanumeric example 12ABC34501DE', () => {
      // By hand, with value = ASCII − 48 (A=17, B=18, C=19, D=20, E=21):
      //   chars   1  2  A  B  C  3  4  5  0  1  D  E
      //   values  1  2 17 18 19  3  4  5  0  1 20 21
      // DV1, weights 5 4 3 2 9 8 7 6 5 4 3 2:
      //   5+8+51+36+171+24+28+30+0+4+60+42 = 459; 459 mod 11 = 8 → 11−8 = 3
      // DV2, weights 6 5 4 3 2 9 8 7 6 5 4 3 2 over the values plus DV1 (3):
      //   6+10+68+54+38+27+32+35+0+5+80+63+6 = 424; 424 mod 11 = 6 → 11−6 = 5
      // → 12ABC34501DE35, matching the published example 12.ABC.345/01DE-35.
      expect(cnpjCheckDigits('12ABC34501DE')).to.equal('35');
    });

    it('rejects a base that is not 12 upper-case alphanumerics', () => {
      expect(() => cnpjCheckDigits('12ABC34501D')).to.throw(RangeError);
      expect(() => cnpjCheckDigits('12abc34501de')).to.throw(RangeError);
      expect(() => cnpjCheckDigits('12ABC34501D-')).to.throw(RangeError);
    });

    it('agrees with a right-to-left cycling-weights reference', () => {
      fc.assert(fc.property(fixed(ALNUM, 12), (base) => cnpjCheckDigits(base) === referenceCnpjDigits(base)));
    });

    it("values letters as ASCII − 48, so '6' (6) and 'A' (17) differ by 11 and share check digits", () => {
      // A known blind spot of the official algorithm; it pins the character mapping down
      // (a naive A=10 mapping would give different digits here).
      expect(cnpjCheckDigits('12ABC34561DE')).to.equal(cnpjCheckDigits('12ABC345A1DE'));
    });
  });

  describe('isValidCpf', () => {
    it('accepts known valid CPFs, bare and formatted', () => {
      for (const cpf of ['529.982.247-25', '52998224725', '111.444.777-35', '11144477735', '12345678909']) {
        expect(isValidCpf(cpf), cpf).to.equal(true);
      }
    });

    it('rejects wrong check digits', () => {
      for (const cpf of ['529.982.247-24', '52998224715', '11144477736', '12345678900']) {
        expect(isValidCpf(cpf), cpf).to.equal(false);
      }
    });

    it('rejects all-equal sequences even though they satisfy the checksum', () => {
      for (const d of DIGITS) {
        const cpf = d.repeat(11);
        expect(cpfCheckDigits(cpf.slice(0, 9)), cpf).to.equal(cpf.slice(9));
        expect(isValidCpf(cpf), cpf).to.equal(false);
        expect(isValidCpf(formatCpf(cpf)), cpf).to.equal(false);
      }
    });

    it('rejects wrong length, letters and non-canonical punctuation', () => {
      const bad = [
        '',
        '5299822472',
        '529982247250',
        '529.982.24725',
        '529982247-25',
        '529-982-247.25',
        '529.982.247/25',
        ' 52998224725',
        '52998224725 ',
        '529 982 247 25',
        '52998224A25',
        '５２９９８２２４７２５', // full-width digits
      ];
      for (const cpf of bad) expect(isValidCpf(cpf), JSON.stringify(cpf)).to.equal(false);
    });

    it('accepts any 9 digits plus their computed check digits, bare and formatted', () => {
      fc.assert(
        fc.property(cpfBase, (base) => {
          const cpf = base + cpfCheckDigits(base);
          return isValidCpf(cpf) && isValidCpf(formatCpf(cpf));
        }),
      );
    });

    it('rejects a valid CPF with either check digit changed', () => {
      fc.assert(
        fc.property(cpfBase, fc.constantFrom(9, 10), fc.integer({ min: 1, max: 9 }), (base, index, delta) => {
          const cpf = bumpDigit(base + cpfCheckDigits(base), index, delta);
          return !isValidCpf(cpf) && !isValidCpf(formatCpf(cpf));
        }),
      );
    });

    it('gives the same verdict for the bare and formatted form of any 11 digits', () => {
      fc.assert(fc.property(fixed(DIGITS, 11), (cpf) => isValidCpf(cpf) === isValidCpf(formatCpf(cpf))));
    });
  });

  describe('isValidCnpj', () => {
    it('accepts known valid numeric CNPJs, bare and formatted', () => {
      for (const cnpj of ['11.222.333/0001-81', '11222333000181', '00.000.000/0001-91', '00000000000191']) {
        expect(isValidCnpj(cnpj), cnpj).to.equal(true);
      }
    });

    it('accepts the official alphanumeric example, bare and formatted', () => {
      expect(isValidCnpj('12ABC34501DE35')).to.equal(true);
      expect(isValidCnpj('12.ABC.345/01DE-35')).to.equal(true);
    });

    it('normalises lowercase letters to upper case before checking', () => {
      expect(isValidCnpj('12abc34501de35')).to.equal(true);
      expect(isValidCnpj('12.aBc.345/01dE-35')).to.equal(true);
    });

    it('rejects wrong check digits', () => {
      for (const cnpj of [
        '11.222.333/0001-80',
        '11222333000191',
        '12ABC34501DE36',
        '12ABC34501DE53',
        '12.ABC.345/01DE-34',
      ]) {
        expect(isValidCnpj(cnpj), cnpj).to.equal(false);
      }
    });

    it('rejects all-equal sequences', () => {
      expect(isValidCnpj('00000000000000')).to.equal(false);
      expect(isValidCnpj('00.000.000/0000-00')).to.equal(false);
      for (const d of DIGITS) expect(isValidCnpj(d.repeat(14)), d.repeat(14)).to.equal(false);
    });

    it('rejects malformed input', () => {
      const bad = [
        '',
        '1122233300018',
        '112223330001810',
        '12ABC34501DEAB', // check digits must be numeric
        '12ABC34501DE3A',
        '12.ABC.345/01DE35',
        '12ABC345/01DE-35',
        '12-ABC-345-01DE-35',
        '12ABC34501DE35 ',
        '12ÇBC34501DE35',
        '12ABC-4501DE35',
      ];
      for (const cnpj of bad) expect(isValidCnpj(cnpj), JSON.stringify(cnpj)).to.equal(false);
    });

    it("does not let non-ASCII letters upper-case into ASCII ('ı' → 'I', 'ſ' → 'S')", () => {
      const withI = 'I2ABC34501DE';
      const withS = 'S2ABC34501DE';
      expect(isValidCnpj(withI + cnpjCheckDigits(withI))).to.equal(true);
      expect(isValidCnpj('ı2ABC34501DE' + cnpjCheckDigits(withI))).to.equal(false);
      expect(isValidCnpj(withS + cnpjCheckDigits(withS))).to.equal(true);
      expect(isValidCnpj('ſ2ABC34501DE' + cnpjCheckDigits(withS))).to.equal(false);
    });

    it('accepts any 12 characters of [0-9A-Z] plus their computed check digits', () => {
      fc.assert(
        fc.property(cnpjBase, (base) => {
          const cnpj = base + cnpjCheckDigits(base);
          return isValidCnpj(cnpj) && isValidCnpj(formatCnpj(cnpj)) && isValidCnpj(cnpj.toLowerCase());
        }),
      );
    });

    it('rejects a valid CNPJ with either check digit changed', () => {
      fc.assert(
        fc.property(cnpjBase, fc.constantFrom(12, 13), fc.integer({ min: 1, max: 9 }), (base, index, delta) => {
          const cnpj = bumpDigit(base + cnpjCheckDigits(base), index, delta);
          return !isValidCnpj(cnpj) && !isValidCnpj(formatCnpj(cnpj));
        }),
      );
    });

    it('gives the same verdict for the bare and formatted form of any candidate', () => {
      const candidate = fc.tuple(fixed(ALNUM, 12), fixed(DIGITS, 2)).map(([a, b]) => a + b);
      fc.assert(fc.property(candidate, (cnpj) => isValidCnpj(cnpj) === isValidCnpj(formatCnpj(cnpj))));
    });
  });

  describe('bareTaxId', () => {
    it('keeps digits and letters only, upper case, whatever the punctuation', () => {
      expect(bareTaxId('11.222.333/0001-81')).to.equal('11222333000181');
      expect(bareTaxId('12.abc.345/01de-35')).to.equal('12ABC34501DE35');
      expect(bareTaxId(' 529_982*247 25 ')).to.equal('52998224725');
    });
  });

  describe('normalizeTaxId', () => {
    it('strips dots, dashes, slashes and spaces and upper-cases', () => {
      expect(normalizeTaxId('CPF', '529.982.247-25')).to.equal('52998224725');
      expect(normalizeTaxId('CPF', ' 529 982 247 25 ')).to.equal('52998224725');
      expect(normalizeTaxId('CNPJ', '11.222.333/0001-81')).to.equal('11222333000181');
      expect(normalizeTaxId('CNPJ', '12.abc.345/01de-35')).to.equal('12ABC34501DE35');
    });

    it('does not validate', () => {
      expect(normalizeTaxId('CPF', '123')).to.equal('123');
    });

    it('inverts formatting for generated ids', () => {
      fc.assert(
        fc.property(cpfBase, cnpjBase, (cpfB, cnpjB) => {
          const cpf = cpfB + cpfCheckDigits(cpfB);
          const cnpj = cnpjB + cnpjCheckDigits(cnpjB);
          return (
            normalizeTaxId('CPF', formatCpf(cpf)) === cpf &&
            normalizeTaxId('CNPJ', formatCnpj(cnpj).toLowerCase()) === cnpj
          );
        }),
      );
    });
  });

  describe('isValidTaxId', () => {
    it('dispatches on the type', () => {
      expect(isValidTaxId('CPF', '529.982.247-25')).to.equal(true);
      expect(isValidTaxId('CNPJ', '11.222.333/0001-81')).to.equal(true);
      expect(isValidTaxId('CNPJ', '12.ABC.345/01DE-35')).to.equal(true);
      // Each id is only valid under its own type.
      expect(isValidTaxId('CNPJ', '529.982.247-25')).to.equal(false);
      expect(isValidTaxId('CPF', '11.222.333/0001-81')).to.equal(false);
    });

    it('accepts loosely typed input once normalised', () => {
      expect(isValidTaxId('CPF', '529 982 247 25')).to.equal(false);
      expect(isValidTaxId('CPF', normalizeTaxId('CPF', '529 982 247 25'))).to.equal(true);
    });
  });
});
