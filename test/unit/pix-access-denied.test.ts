import { expect } from 'chai';
import { RailUnavailableError } from '../../rails/errors';
import { pixRailAgainst } from '../helpers/pix-stub';

// API Pix answers 403 AcessoNegado to an authenticated client its rules do not admit (a scope or a certificate the
// operator has to fix): it says nothing of the customer's request nor of the payout, so it is "not now", not "no".

describe('PIX connector: a 403 AcessoNegado of a spec-faithful PSP', () => {
  it('a charge, a payout and a return the PSP denies access to are RailUnavailableError, never a refusal', async () => {
    const { rail, close } = await pixRailAgainst((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/oauth/token') {
          res.setHeader('content-type', 'application/json');
          return res.end(JSON.stringify({ access_token: 't', expires_in: 3600 }));
        }
        // The payout side reads back 404 (nothing under the idEnvio): only the PUT was denied.
        res.statusCode = req.method === 'GET' ? 404 : 403;
        res.setHeader('content-type', 'application/problem+json');
        res.end(
          JSON.stringify({
            type: 'https://pix.bcb.gov.br/api/v2/error/AcessoNegado',
            title: 'Acesso Negado',
            status: res.statusCode,
            detail: 'Requisição de participante autenticado que viola alguma regra de autorização.',
          }),
        );
      });
    });
    const outcome = (p: Promise<unknown>) =>
      p.then(
        () => 'answered',
        (err: Error) => err,
      );
    try {
      const charge = await outcome(
        rail.createCharge({ chargeId: 'a'.repeat(30), amount: '10.00', expiresInSeconds: 600 }),
      );
      expect(charge).to.be.instanceOf(RailUnavailableError);
      const payout = await outcome(
        rail.sendPayout({ payoutId: 'cbw1', amount: '10.00', key: 'x@example.com' } as never),
      );
      expect(payout).to.be.instanceOf(RailUnavailableError);
      const ret = await outcome(
        rail.returnPayment({
          endToEndId: 'E12345678202612050000abcdefghijk',
          returnId: 'cbr1',
          amount: '1.00',
        } as never),
      );
      expect(ret).to.be.instanceOf(RailUnavailableError);
    } finally {
      await close();
    }
  });
});
