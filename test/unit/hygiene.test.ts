import { expect } from 'chai';
import { findUnsafeText, MAX_DEPTH } from '../../api/schemas/hygiene';
import { validateWith } from '../../api/schemas/ajv';
import { amountValue, pastDate } from '../../api/schemas/common';
import { checkAmountLimit, Dec, withinAmountBounds } from '../../domain/money';
import { cambioErrorOf } from '../helpers/errors';

describe('input hygiene', () => {
  it('finds NUL and unpaired surrogates in values and keys, with their JSON pointer', () => {
    expect(findUnsafeText({ a: 'ok', b: ['fine', 'x\u0000y'] })).to.deep.equal({
      path: '/b/1',
      message: 'must not contain NUL characters',
    });
    expect(findUnsafeText({ name: 'a\ud800' })?.path).to.equal('/name');
    expect(findUnsafeText({ name: '\udc00b' })?.message).to.equal('must not contain unpaired UTF-16 surrogates');
    expect(findUnsafeText({ name: '\udc00\ud800' })?.path).to.equal('/name');
    expect(findUnsafeText({ 'a/b\u0000': 1 })).to.deep.equal({
      path: '/a~1b\ufffd',
      message: 'property name must not contain NUL characters',
    });
  });

  it('accepts paired surrogates, other Unicode and non-string values', () => {
    expect(findUnsafeText({ emoji: '💥', text: 'São Paulo ñ 漢字', n: 1, b: true, z: null, list: [[{}]] })).to.equal(
      null,
    );
    expect(findUnsafeText('plain')).to.equal(null);
  });

  it('refuses controls, bidirectional formatting and invisible characters, naming the code point (0274)', () => {
    const table: Array<[string, string | null]> = [
      ['a\u0001b', 'must not contain control characters (U+0001)'],
      ['a\nb', 'must not contain control characters (U+000A)'],
      ['a\u009bb', 'must not contain control characters (U+009B)'],
      ['a\u2029b', 'must not contain control characters (U+2029)'],
      ['a\u202ab', 'must not contain bidirectional formatting characters (U+202A)'],
      ['a\u2066b', 'must not contain bidirectional formatting characters (U+2066)'],
      ['a\u061cb', 'must not contain bidirectional formatting characters (U+061C)'],
      ['a\u2064b', 'must not contain invisible characters (U+2064)'],
      // Joiners some scripts need, a soft hyphen, a no-break space, and text in other scripts pass.
      ['می\u200cخواهم 👩\u200d💻 co\u00adop a\u00a0b 北京 שלום', null],
    ];
    for (const [text, message] of table) expect(findUnsafeText({ text })?.message ?? null, text).to.equal(message);
    expect(findUnsafeText({ 'x\u202e\u001b[2J': 1 })).to.deep.equal({
      path: '/x\ufffd\ufffd[2J',
      message: 'property name must not contain control characters (U+001B)',
    });
  });

  it('bounds nesting without recursion', () => {
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findUnsafeText(deep)?.message).to.match(/nested too deeply/);
    let ok: unknown = {};
    for (let i = 0; i < MAX_DEPTH - 1; i++) ok = { a: ok };
    expect(findUnsafeText(ok)).to.equal(null);
  });

  it('refuses a query number that coerces to infinity, which Ajv lets past integer bounds', () => {
    const schema = { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100 } } };
    for (const limit of ['Infinity', '-Infinity', '1e400', ' Infinity']) {
      const err = cambioErrorOf(() => validateWith('query', schema, { limit }));
      expect([err.code, err.details.errors], limit).to.deep.equal([
        'VALIDATION_ERROR',
        [{ path: '/query/limit', message: 'must be a finite number' }],
      ]);
    }
    const query: Record<string, unknown> = { limit: '100' };
    validateWith('query', schema, query);
    expect(query.limit).to.equal(100);
  });

  it('refuses a query number not written in decimal digits, which Ajv would read as another number', () => {
    const schema = { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100 } } };
    // Ajv coerces with Number(): 0x10 is 16, 1e1 is 10, ' 1' is 1; a client that wrote them meant something else.
    // ('\t2' is refused before, as a control character: decision 0274.)
    for (const limit of ['0x10', '1e1', ' 1', '1 ', '0b11', '0o7', '+5']) {
      const err = cambioErrorOf(() => validateWith('query', schema, { limit }));
      expect([err.code, err.details.errors], JSON.stringify(limit)).to.deep.equal([
        'VALIDATION_ERROR',
        [{ path: '/query/limit', message: 'must be written in decimal digits' }],
      ]);
    }
    for (const [limit, read] of [
      ['7', 7],
      ['007', 7],
      ['10.0', 10],
    ] as const) {
      const query: Record<string, unknown> = { limit };
      validateWith('query', schema, query);
      expect(query.limit, limit).to.equal(read);
    }
  });

  it('answers unsafe text through validateWith as VALIDATION_ERROR before the schema runs', () => {
    const err = cambioErrorOf(() => validateWith('query', { type: 'object' }, { filters: 'a[eq]=\u0000' }));
    expect(err.code).to.equal('VALIDATION_ERROR');
    expect(err.details.errors).to.deep.equal([{ path: '/query/filters', message: 'must not contain NUL characters' }]);
  });
});

describe('amount bounds', () => {
  const schema = { type: 'object', properties: { amount: amountValue, other: { type: 'string' } } };

  it('allows up to 15 digits before the point and 64 characters', () => {
    expect(withinAmountBounds('999999999999999.999999')).to.equal(true);
    expect(withinAmountBounds('000000000000000000001.50')).to.equal(true);
    expect(withinAmountBounds('1000000000000000')).to.equal(false);
    expect(withinAmountBounds(`1.${'0'.repeat(63)}`)).to.equal(false);
    expect(withinAmountBounds('not a number')).to.equal(true); // the pattern reports it
  });

  it('is INVALID_AMOUNT alone, VALIDATION_ERROR with other schema errors', () => {
    expect(cambioErrorOf(() => validateWith('body', schema, { amount: '9'.repeat(33) })).code).to.equal(
      'INVALID_AMOUNT',
    );
    expect(cambioErrorOf(() => validateWith('body', schema, { amount: '9'.repeat(33), other: 1 })).code).to.equal(
      'VALIDATION_ERROR',
    );
    expect(cambioErrorOf(() => validateWith('body', schema, { amount: '1e5' })).code).to.equal('VALIDATION_ERROR');
    expect(() => validateWith('body', schema, { amount: '999999999999999.99' })).not.to.throw();
  });

  it('bounds a computed amount with checkAmountLimit', () => {
    expect(() => checkAmountLimit(new Dec('999999999999999.999999'), 'USD', '/targetAmount')).not.to.throw();
    const err = cambioErrorOf(() => checkAmountLimit(new Dec('-1000000000000000'), 'USD', '/targetAmount'));
    expect([err.code, err.details.path]).to.deep.equal(['INVALID_AMOUNT', '/targetAmount']);
  });
});

describe('date bounds', () => {
  const schema = { type: 'object', properties: { d: pastDate } };
  it('accepts real dates from 1900-01-01 and refuses earlier or impossible ones', () => {
    expect(() => validateWith('body', schema, { d: '1900-01-01' })).not.to.throw();
    for (const d of ['1899-12-31', '0000-01-01', '2020-02-30', '20200-01-01']) {
      expect(cambioErrorOf(() => validateWith('body', schema, { d })).code, d).to.equal('VALIDATION_ERROR');
    }
  });
});
