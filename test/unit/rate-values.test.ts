import { expect } from 'chai';
import { parseJsonKeepingNumbers, positiveDecimal } from '../../rates/values';
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
