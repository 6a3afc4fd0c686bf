// A PIX notice's items as the route accepts them (decisions.md, "A claim is not money"): strict formats, every bad
// field named, never an exception other than NoticeRejectedError 400; and a PSP record confirms a claim only with
// the same end-to-end id, txid and valor. The read-back itself is tested over HTTP (pix-contract, pix-notice-claims).
import { expect } from 'chai';
import { NoticeRejectedError } from '../../rails/errors';
import { loggablePath } from '../../api/observability/loggable-path';
import { isRfc3339Instant, parseNoticeItems, pixItemProblems, unconfirmed } from '../../rails/pix/notices';

const E2E = 'E99999008202612011230abcDEF12345';
const good = { endToEndId: E2E, txid: 'cb0123456789abcdef0123456789', valor: '10.50', horario: '2026-12-01T12:30:00Z' };

const problemsOf = (change: Record<string, unknown>) => pixItemProblems({ ...good, ...change });
const rejection = (body: unknown): NoticeRejectedError => {
  try {
    parseNoticeItems(body);
  } catch (err) {
    expect(err).to.be.instanceOf(NoticeRejectedError);
    return err as NoticeRejectedError;
  }
  throw new Error('expected a NoticeRejectedError');
};

describe('PIX notice items', () => {
  it('takes a well-formed item, with or without txid, offsets and fractions', () => {
    expect(pixItemProblems(good)).to.deep.equal([]);
    const { txid: _txid, ...noTxid } = good;
    expect(pixItemProblems(noTxid)).to.deep.equal([]);
    for (const horario of ['2026-12-01T12:30:00.123Z', '2026-12-01T09:30:00-03:00', '2024-02-29T23:59:59+00:00']) {
      expect(problemsOf({ horario }), horario).to.deep.equal([]);
    }
    expect(problemsOf({ endToEndId: 'D99999008202612011230abcDEF12345' })).to.deep.equal([]);
    expect(problemsOf({ valor: '9999999999.99' })).to.deep.equal([]);
  });

  it('refuses a valor that is not \\d{1,10}\\.\\d{2} or not above zero', () => {
    for (const valor of ['-5.001', '-5.00', '5', '5.1', '5.001', '1e3', '10000000000.00', ' 5.00', 5, null]) {
      expect(
        problemsOf({ valor }).map((p) => p.path),
        String(valor),
      ).to.deep.equal(['/valor']);
    }
    expect(problemsOf({ valor: '0.00' })).to.deep.equal([{ path: '/valor', message: 'must be above zero' }]);
  });

  it('refuses a horario that is not an RFC 3339 instant, without throwing', () => {
    const bad = [
      'yesterday',
      '2026-12-01',
      '2026-12-01T12:30:00', // no offset: not an instant
      '2026-02-30T12:00:00Z',
      '2026-13-01T12:00:00Z',
      '2026-12-01T24:00:00Z',
      '2026-12-01T12:60:00Z',
      '2026-12-01T12:00:00+25:00',
      '+275760-09-13T00:00:01Z',
      '',
      1733056200000,
    ];
    for (const horario of bad) {
      expect(
        problemsOf({ horario }).map((p) => p.path),
        String(horario),
      ).to.deep.equal(['/horario']);
    }
    expect(isRfc3339Instant('2025-02-29T00:00:00Z')).to.equal(false);
  });

  it('refuses an endToEndId that is not [ED] + 8 digits + 12 digits + 11 alphanumerics', () => {
    const bad = [
      'X99999008202612011230abcDEF12345',
      'E9999900820261201123abcDEF123456', // a letter among the 20 digits
      'E99999008202612011230abcDEF1234',
      'E99999008202612011230abcDEF123456',
      'E99999008202612011230abcDEF1234-',
      'e99999008202612011230abcDEF12345',
      42,
    ];
    for (const endToEndId of bad) {
      expect(
        problemsOf({ endToEndId }).map((p) => p.path),
        String(endToEndId),
      ).to.deep.equal(['/endToEndId']);
    }
  });

  it('refuses a txid that is present and not a string', () => {
    expect(problemsOf({ txid: 123 }).map((p) => p.path)).to.deep.equal(['/txid']);
    expect(problemsOf({ txid: null }).map((p) => p.path)).to.deep.equal(['/txid']);
  });

  it('a notice with one bad item is a 400 naming every bad field; a `pix` that is not a list too', () => {
    const err = rejection({ pix: [good, { ...good, valor: '-5.001', horario: 'soon' }] });
    expect(err.status).to.equal(400);
    expect(err.problems.map((p) => p.path)).to.deep.equal(['/pix/1/valor', '/pix/1/horario']);
    expect(err.message).to.contain('/pix/1/valor');
    for (const body of [null, 'pix', [], { pix: {} }, { pix: null }, { pix: [null] }, { pix: ['x'] }]) {
      expect(rejection(body).status, JSON.stringify(body)).to.equal(400);
    }
    expect(parseNoticeItems({ pix: [] })).to.deep.equal([]);
    // A PSP testing the URL (decision 0261): no body, or one that names no `pix`, claims nothing.
    for (const body of [undefined, {}, { evento: 'teste_webhook' }]) {
      expect(parseNoticeItems(body), JSON.stringify(body)).to.deep.equal([]);
    }
    expect(parseNoticeItems({ pix: [good] })).to.deep.equal([good]);
  });

  it('a PSP record confirms a claim only with the same endToEndId, txid and valor', () => {
    expect(unconfirmed(good, { ...good, valor: '10.5', horario: '2026-12-01T12:31:00Z' } as typeof good)).to.equal(
      undefined,
    );
    expect(unconfirmed(good, { ...good, valor: '10.51' })).to.match(/^valor differs/);
    expect(unconfirmed(good, { ...good, txid: 'cbother' })).to.match(/^txid differs/);
    const { txid: _txid, ...noTxid } = good;
    expect(unconfirmed(good, noTxid)).to.match(/^txid differs/);
    expect(unconfirmed(noTxid, good)).to.match(/^txid differs/);
    expect(unconfirmed(good, { ...good, endToEndId: 'E99999008202612011230abcDEF99999' })).to.match(/another Pix/);
  });

  it('a logged path never holds the notice token', () => {
    expect(loggablePath('/rails/pix/s3cr3t-token/pix')).to.equal('/rails/pix/<token>/pix');
    expect(loggablePath('/rails/pix/s3cr3t-token')).to.equal('/rails/pix/<token>');
    expect(loggablePath('/rails/pix/s3cr3t-token/other/tail')).to.equal('/rails/pix/<token>/other/tail');
    expect(loggablePath('/api/accounts/1')).to.equal('/api/accounts/1');
  });
});
