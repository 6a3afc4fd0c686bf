// An operator reads what an account review attests before deciding it (decision 0351): `cambio account list` gives
// the accounts waiting for a decision with their UBOs and the documents an approval accepts, and `cambio account
// document` gives a document's content, recorded in the audit log.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { addUbo, createAccount, submitReview, uploadAllDocuments } from '../helpers/fixtures';
import { newCustomer } from '../helpers/stack';
import { cambio, cambioFails } from '../helpers/cli';

const json = async (...args: string[]) => JSON.parse((await cambio(...args, '--json')).stdout);

describe('operators read an account review before deciding it, and decide the round they read', function () {
  this.timeout(120000);

  it('lists the accounts UNDER_REVIEW with their UBOs and documents; a document reads back as uploaded', async () => {
    const since = new Date().toISOString();
    const c = await newCustomer();
    const account = await createAccount(c, { assets: ['BRL'], legalName: 'Revisada Comércio Ltda' });
    const ubo = await addUbo(c, account.id);
    await uploadAllDocuments(c, account.id);
    await submitReview(c, account.id);
    const waiting = await createAccount(c, { assets: ['BRL'] }); // still ACTION_REQUIRED: not listed

    type Row = { id: string; customerId: string; owner: { legalName: string }; ubos: Array<{ id: string }> };
    type Doc = { id: string; documentType: string; uboId: string | null; status: string };
    const rows: Array<Row & { documents: Doc[] }> = await json('account', 'list');
    const ids = rows.map((r) => r.id);
    expect(ids).to.include(account.id);
    expect(ids).to.not.include(waiting.id);
    const row = rows.find((r) => r.id === account.id)!;
    expect([row.customerId, row.owner.legalName]).to.deep.equal([c.customerId, 'Revisada Comércio Ltda']);
    expect(row.ubos.map((u) => u.id)).to.deep.equal([ubo.id]);
    expect(row.documents.map((d) => [d.documentType, d.uboId, d.status]).sort()).to.deep.equal([
      ['CERTIFICATE_OF_INCORPORATION', null, 'PENDING_VERIFICATION'],
      ['ID_DOCUMENT', ubo.id, 'PENDING_VERIFICATION'],
      ['PROOF_OF_ADDRESS', null, 'PENDING_VERIFICATION'],
    ]);
    const human = (await cambio('account', 'list')).stdout;
    expect(human).to.include(`${account.id} round 1 Revisada Comércio Ltda`);

    // The content, to a file and to stdout, as uploaded (documentBody's bytes).
    const doc = row.documents.find((d) => d.documentType === 'ID_DOCUMENT')!;
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cambio-doc-')), 'id.pdf');
    const written = await json('account', 'document', doc.id.toUpperCase(), '--out', out);
    expect(written).to.deep.include({ id: doc.id, accountId: account.id, customerId: c.customerId, file: out });
    expect(fs.readFileSync(out, 'utf8')).to.equal('%PDF-1.4 test document');
    expect((await cambio('account', 'document', doc.id)).stdout).to.equal('%PDF-1.4 test document');
    const missing = await cambioFails('account', 'document', randomUUID());
    expect(missing.body.code).to.equal('NOT_FOUND');

    // A decision names the round the operator read: once the customer resubmitted, it is refused.
    expect(row).to.deep.include({ round: 1 });
    const stale = await cambioFails('account', 'approve', account.id, '--round', '2');
    expect([stale.body.code, stale.body.details]).to.deep.equal(['INVALID_STATE', { round: 1 }]);
    const badRound = await cambioFails('account', 'approve', account.id, '--round', 'first');
    expect(badRound.body.code).to.equal('VALIDATION_ERROR');
    const approved = await json('account', 'approve', account.id, '--round', '1');
    expect(approved.currentState.status).to.equal('ACTIVE');

    // Each read is in the audit log, by the document's id.
    const audit: Array<{ action: string; target: string }> = await json('audit', 'list', '--since', since);
    const reads = audit.filter((r) => r.action === 'account.document' && r.target === doc.id);
    expect(reads).to.have.length(2);
  });
});
