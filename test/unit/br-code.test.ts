import { expect } from 'chai';
import { crc16, decodeBrCode, encodeBrCode } from '../../rails/pix/br-code';

describe('BR Code (Pix Copia e Cola)', () => {
  it('CRC16-CCITT-FALSE gives the standard check value and the BCB manual example', () => {
    // The catalogue check value of CRC-16/CCITT-FALSE over "123456789".
    expect(crc16('123456789')).to.equal('29B1');
    // The static example of the BCB's "Manual de Padrões para Iniciação do Pix", whose printed CRC is 1D3D.
    const manual =
      '00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-426655440000' +
      '5204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***6304';
    expect(crc16(manual)).to.equal('1D3D');
  });

  it('lays out a dynamic charge field by field, lengths counted by hand', () => {
    const code = encodeBrCode({
      location: 'pix.example.com/qr/v2/abc123',
      amount: '100.00',
      merchantName: 'Cambio',
      merchantCity: 'São Paulo',
    });
    const body =
      '000201' + // payload format 01
      '010212' + // dynamic: one payment
      '2650' + // merchant account: 18 + 32 characters
      '0014br.gov.bcb.pix' +
      '2528pix.example.com/qr/v2/abc123' +
      '52040000' +
      '5303986' + // BRL
      '5406100.00' +
      '5802BR' +
      '5906Cambio' +
      '6009Sao Paulo' + // accent dropped
      '62070503***' +
      '6304';
    expect(code.slice(0, -4)).to.equal(body);
    expect(code.slice(-4))
      .to.equal(crc16(body))
      .and.to.match(/^[0-9A-F]{4}$/);
  });

  it('decodes back to the charge location and amount, and refuses a changed character', () => {
    const code = encodeBrCode({
      location: 'psp.example/cob/9d36b84fc70b478fb95c12729b90ca25',
      amount: '1234.56',
      merchantName: 'Uma Empresa Com Nome Muito Comprido Ltda',
      merchantCity: 'Florianopolis Centro',
    });
    const fields = decodeBrCode(code);
    expect(fields['26']).to.deep.equal({
      '00': 'br.gov.bcb.pix',
      '25': 'psp.example/cob/9d36b84fc70b478fb95c12729b90ca25',
    });
    expect(fields['54']).to.equal('1234.56');
    expect(fields['59']).to.have.length(25);
    expect(fields['60']).to.have.length(15);
    expect(fields['62']).to.deep.equal({ '05': '***' });
    const tampered = code.replace('1234.56', '1234.57');
    expect(() => decodeBrCode(tampered)).to.throw(/CRC/);
  });
});
