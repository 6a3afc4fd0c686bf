import { expect } from 'chai';
import { BrCodeError, brCodeLocation, crc16, decodeBrCode, encodeBrCode } from '../../rails/pix/br-code';
import { RailRejectedError } from '../../rails/errors';
import { pixRailAgainst } from '../helpers/pix-stub';

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

describe('BR Code: the merchant name and the location', () => {
  const base = { amount: '10.00', merchantName: 'Cambio', merchantCity: 'Sao Paulo' };

  it('cuts the merchant name to 25 and never leaves it ending in a space', () => {
    // The 25th character is the space before "Ltda".
    const fields = decodeBrCode(
      encodeBrCode({ ...base, location: 'psp.example/l/1', merchantName: 'Comercio Exterior Brasil Ltda' }),
    );
    expect(fields['59']).to.equal('Comercio Exterior Brasil');
  });

  it('leaves out the scheme of a location given with one', () => {
    for (const location of [
      'https://psp.example/qr/v2/abc',
      'HTTPS://psp.example/qr/v2/abc',
      'http://psp.example/qr/v2/abc',
    ]) {
      expect(decodeBrCode(encodeBrCode({ ...base, location }))['26']).to.deep.equal({
        '00': 'br.gov.bcb.pix',
        '25': 'psp.example/qr/v2/abc',
      });
    }
  });

  it('refuses a location over 77 characters with a clear error; 77 fits, counted without the scheme', () => {
    const at77 = `psp.example/${'a'.repeat(77 - 12)}`;
    expect(decodeBrCode(encodeBrCode({ ...base, location: `https://${at77}` }))['26']).to.have.property('25', at77);
    expect(() => encodeBrCode({ ...base, location: `${at77}b` })).to.throw(BrCodeError, /78 characters.*1 to 77/);
    expect(() => brCodeLocation('https://')).to.throw(BrCodeError);
  });

  it('a PSP whose charge location is too long: the connector refuses the charge (RailRejectedError)', async () => {
    const long = `psp.example/qr/v2/${'x'.repeat(70)}`;
    const { rail, close } = await pixRailAgainst((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/oauth/token') return res.end(JSON.stringify({ access_token: 't', expires_in: 300 }));
      const txid = req.url!.split('/').pop();
      res.statusCode = 201;
      res.end(
        JSON.stringify({
          txid,
          calendario: { criacao: new Date().toISOString(), expiracao: 600 },
          location: long,
          valor: { original: '10.00' },
          chave: 'key@example.com',
        }),
      );
    });
    try {
      const charge = rail.createCharge({ chargeId: 'a'.repeat(30), amount: '10.00', expiresInSeconds: 600 });
      await charge.then(
        () => expect.fail('a charge with an 88-character location was answered'),
        (err: Error) => {
          expect(err).to.be.instanceOf(RailRejectedError);
          expect(err.message).to.match(/location is 88 characters.*1 to 77/);
        },
      );
    } finally {
      await close();
    }
  });
});
