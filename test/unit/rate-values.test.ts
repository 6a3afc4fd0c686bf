import { expect } from 'chai';
import { parseJsonKeepingNumbers, positiveDecimal, refusalReason } from '../../rates/values';
import { translateLatest } from '../../rates/oxr/translation';
import { translateDay } from '../../rates/ptax/translation';

describe('rates/values', () => {
  it('keeps every number of a JSON text as the digits the source wrote', () => {
    const parsed = parseJsonKeepingNumbers(
      '{"a": 5.40123456789012345678901, "b": [1, -2.5e-3, 0], "s": "x: 1.5 \\" 2", "t": true, "n": null}',
    );
    expect(parsed).to.deep.equal({
      a: '5.40123456789012345678901',
      b: ['1', '-2.5e-3', '0'],
      s: 'x: 1.5 " 2',
      t: true,
      n: null,
    });
  });

  it('accepts positive decimals only', () => {
    expect(positiveDecimal('5.4012')).to.equal('5.4012');
    expect(positiveDecimal('1e-3')).to.equal('0.001');
    for (const bad of ['0', '0.000', '5,41', '-5.41', '', ' 5.4', 'NaN', 'Infinity', '0x10', undefined, null, 5.4]) {
      expect(positiveDecimal(bad), String(bad)).to.equal(undefined);
    }
  });

  it('refuses a value outside 1e-9 .. 1e9 or past 40 significant digits, some of which the column cannot hold', () => {
    expect(positiveDecimal('1e-9')).to.equal('0.000000001');
    expect(positiveDecimal('1E9')).to.equal('1000000000');
    expect(positiveDecimal('57.50')).to.equal('57.5');
    // 1e400000 and 1E-400000 are 400,001 digits written out, past what Postgres' numeric holds.
    for (const bad of ['1e400000', '1E-400000', '1e-10', '0.0000000009', '1000000001', '1e99999999999999999999']) {
      expect(positiveDecimal(bad), bad).to.equal(undefined);
      expect(refusalReason(bad), bad).to.equal(`outside 1e-9 .. 1e9: ${JSON.stringify(bad)}`);
    }
    const digits40 = `5.${'4'.repeat(39)}`;
    expect(positiveDecimal(digits40)).to.equal(digits40);
    expect(positiveDecimal(`${digits40}1`)).to.equal(undefined);
    expect(refusalReason(`${digits40}1`)).to.equal(`more than 40 significant digits: "${digits40}1"`);
    // Trailing zeros are not digits of the value; a long refused value is shown cut.
    expect(positiveDecimal(`5.4${'0'.repeat(100)}`)).to.equal('5.4');
    expect(refusalReason(`1${'0'.repeat(100)}`)).to.equal(`outside 1e-9 .. 1e9: "1${'0'.repeat(62)}…`);
  });

  it('OXR: an overflowing value is refused alone; the rest of the answer stays', () => {
    const answer = translateLatest(
      '{"timestamp": 1764640800, "base": "USD", "rates": {"BRL": 5.4012, "EUR": 1e400000, "MXN": 1E-400000}}',
    );
    expect(answer.rates).to.deep.equal([
      { currency: 'BRL', mid: '5.4012', sourceTime: new Date('2025-12-02T02:00:00Z') },
    ]);
    expect(answer.refused).to.deep.include({ currency: 'EUR', reason: 'outside 1e-9 .. 1e9: "1e400000"' });
    expect(answer.refused).to.deep.include({ currency: 'MXN', reason: 'outside 1e-9 .. 1e9: "1E-400000"' });
  });

  it('OXR: a value of more than 400 digits is refused alone; the rest of the answer stays', () => {
    const long = `5.${'4'.repeat(500)}`;
    const answer = translateLatest(
      `{"timestamp": 1764640800, "base": "USD", "rates": {"BRL": 5.4012, "EUR": ${long}, "MXN": 1${'0'.repeat(450)}}}`,
    );
    expect(answer.rates).to.deep.equal([
      { currency: 'BRL', mid: '5.4012', sourceTime: new Date('2025-12-02T02:00:00Z') },
    ]);
    expect(answer.refused).to.deep.include({
      currency: 'EUR',
      reason: `more than 40 significant digits: "${long.slice(0, 63)}…`,
    });
    expect(answer.refused).to.deep.include({
      currency: 'MXN',
      reason: `outside 1e-9 .. 1e9: "1${'0'.repeat(62)}…`,
    });
  });

  it('OXR: refuses a body whose base is not USD or whose timestamp is not Unix seconds', () => {
    expect(() => translateLatest('{"timestamp": 1764640800, "base": "EUR", "rates": {}}')).to.throw(/base must be USD/);
    expect(() => translateLatest('{"timestamp": "soon", "base": "USD", "rates": {}}')).to.throw(/timestamp/);
    expect(() => translateLatest('<html>')).to.throw(/not JSON/);
  });

  it('PTAX: an empty value list is a day without bulletins; a bad quotation is refused', () => {
    expect(translateDay('{"value": []}', 'USD')).to.equal(null);
    const bad = translateDay(
      '{"value": [{"cotacaoCompra": 0, "cotacaoVenda": 5.41, "dataHoraCotacao": "2026-11-27 13:09:27.153"}]}',
      'USD',
    );
    expect(bad).to.deep.equal({
      base: 'USD',
      rates: [],
      refused: [{ currency: 'BRL', reason: 'not a positive decimal: "0"' }],
    });
  });
});
