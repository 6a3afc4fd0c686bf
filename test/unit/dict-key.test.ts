import { expect } from 'chai';
import fc from 'fast-check';
import { DictKeyType, isValidDictKey } from '../../domain/dict-key';
import { cnpjCheckDigits, cpfCheckDigits } from '../../domain/tax-id';

const DIGITS = '0123456789'.split('');
const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');
const fixed = (chars: string[], length: number) =>
  fc.array(fc.constantFrom(...chars), { minLength: length, maxLength: length }).map((a) => a.join(''));
const notAllSame = (s: string) => s.split('').some((c) => c !== s[0]);

const ALL_TYPES: DictKeyType[] = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP'];

describe('dict-key', () => {
  describe('CPF', () => {
    it('accepts a valid CPF as 11 bare digits', () => {
      expect(isValidDictKey('CPF', '52998224725')).to.equal(true);
      expect(isValidDictKey('CPF', '11144477735')).to.equal(true);
    });

    it('rejects the masked form, bad check digits and repeated digits', () => {
      for (const key of ['529.982.247-25', '52998224724', '11111111111', '5299822472', ' 52998224725']) {
        expect(isValidDictKey('CPF', key), key).to.equal(false);
      }
    });

    it('accepts every generated CPF', () => {
      const cpf = fixed(DIGITS, 9)
        .filter(notAllSame)
        .map((b) => b + cpfCheckDigits(b));
      fc.assert(fc.property(cpf, (key) => isValidDictKey('CPF', key)));
    });
  });

  describe('CNPJ', () => {
    it('accepts numeric and alphanumeric CNPJs as 14 bare characters', () => {
      expect(isValidDictKey('CNPJ', '11222333000181')).to.equal(true);
      expect(isValidDictKey('CNPJ', '12ABC34501DE35')).to.equal(true);
    });

    it('rejects masks, lowercase, bad check digits and repeated digits', () => {
      const bad = ['11.222.333/0001-81', '12.ABC.345/01DE-35', '12abc34501de35', '11222333000180', '00000000000000'];
      for (const key of bad) expect(isValidDictKey('CNPJ', key), key).to.equal(false);
    });

    it('accepts every generated alphanumeric CNPJ', () => {
      const cnpj = fixed(ALNUM, 12)
        .filter(notAllSame)
        .map((b) => b + cnpjCheckDigits(b));
      fc.assert(fc.property(cnpj, (key) => isValidDictKey('CNPJ', key)));
    });
  });

  describe('EMAIL', () => {
    it('accepts ordinary addresses', () => {
      for (const key of ['fulano@example.com', 'a.b+pix@sub.example.com.br', 'x@a.io', 'Fulano_1@Example.COM']) {
        expect(isValidDictKey('EMAIL', key), key).to.equal(true);
      }
    });

    it('rejects addresses without exactly one @, a local part or a dotted domain', () => {
      const bad = [
        '',
        'fulano.example.com',
        'fulano@@example.com',
        'a@b@example.com',
        '@example.com',
        'fulano@',
        'fulano@localhost',
        'fulano@.com',
        'fulano@example.',
        'fulano@example..com',
        'fulano@exa_mple.com',
        '.fulano@example.com',
        'fulano.@example.com',
        'ful..ano@example.com',
        'fulano@-example.com',
        'fulano@example-.com',
      ];
      for (const key of bad) expect(isValidDictKey('EMAIL', key), key).to.equal(false);
    });

    it('rejects whitespace anywhere', () => {
      for (const key of ['ful ano@example.com', 'fulano@exa mple.com', ' fulano@example.com', 'fulano@example.com\n']) {
        expect(isValidDictKey('EMAIL', key), JSON.stringify(key)).to.equal(false);
      }
    });

    it('allows at most 77 characters', () => {
      const domain = '@example.com';
      const at77 = 'a'.repeat(77 - domain.length) + domain;
      expect(at77).to.have.length(77);
      expect(isValidDictKey('EMAIL', at77)).to.equal(true);
      expect(isValidDictKey('EMAIL', 'a' + at77)).to.equal(false);
    });
  });

  describe('PHONE', () => {
    it('accepts +55, a 2-digit area code and 8 or 9 digits', () => {
      for (const key of ['+5511987654321', '+551133334444', '+5599912345678', '+5521912345678']) {
        expect(isValidDictKey('PHONE', key), key).to.equal(true);
      }
    });

    it('rejects other shapes', () => {
      const bad = [
        '5511987654321', // no '+'
        '+55 11 98765-4321',
        '+55(11)987654321',
        '+5501987654321', // area code starts with 0
        '+5510987654321', // area code 10 is outside 11–99
        '+15511987654321',
        '+5411987654321', // another country
        '+55119876543', // 7 digits
        '+55119876543210', // 10 digits
        '+5511987654321\n',
        '',
      ];
      for (const key of bad) expect(isValidDictKey('PHONE', key), JSON.stringify(key)).to.equal(false);
    });

    it('accepts every area code 11–99 with 8 or 9 subscriber digits', () => {
      const phone = fc
        .tuple(fc.integer({ min: 11, max: 99 }), fc.oneof(fixed(DIGITS, 8), fixed(DIGITS, 9)))
        .map(([ddd, n]) => `+55${ddd}${n}`);
      fc.assert(fc.property(phone, (key) => isValidDictKey('PHONE', key)));
    });
  });

  describe('EVP', () => {
    it('accepts UUIDs in lower or upper case', () => {
      expect(isValidDictKey('EVP', '123e4567-e89b-12d3-a456-426614174000')).to.equal(true);
      expect(isValidDictKey('EVP', '123E4567-E89B-12D3-A456-426614174000')).to.equal(true);
    });

    it('rejects anything that is not 8-4-4-4-12 hex', () => {
      const bad = [
        '',
        '123e4567e89b12d3a456426614174000',
        '{123e4567-e89b-12d3-a456-426614174000}',
        '123e4567-e89b-12d3-a456-42661417400g',
        '123e4567-e89b-12d3-a456-42661417400',
        '123e4567-e89b-12d3-a4560-42661417400',
        ' 123e4567-e89b-12d3-a456-426614174000',
        // The nil UUID: DICT draws an EVP at random, never this one; a payout to it could only fail.
        '00000000-0000-0000-0000-000000000000',
      ];
      for (const key of bad) expect(isValidDictKey('EVP', key), key).to.equal(false);
    });

    it('accepts any generated UUID', () => {
      fc.assert(
        fc.property(fc.uuid(), (key) => isValidDictKey('EVP', key) && isValidDictKey('EVP', key.toUpperCase())),
      );
    });
  });

  it('accepts each example key only under its own type', () => {
    const examples: Record<DictKeyType, string> = {
      CPF: '52998224725',
      CNPJ: '11222333000181',
      EMAIL: 'fulano@example.com',
      PHONE: '+5511987654321',
      EVP: '123e4567-e89b-12d3-a456-426614174000',
    };
    for (const keyType of ALL_TYPES) {
      for (const asType of ALL_TYPES) {
        expect(isValidDictKey(asType, examples[keyType]), `${keyType} key as ${asType}`).to.equal(keyType === asType);
      }
    }
  });

  it('returns false rather than undefined for an unknown type from untyped input', () => {
    expect(isValidDictKey('IBAN' as DictKeyType, 'anything')).to.equal(false);
  });
});
