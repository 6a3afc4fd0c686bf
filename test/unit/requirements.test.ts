import { expect } from 'chai';
import {
  computeRequirements,
  isRequired,
  readyForReview,
  RequirementDocument,
  requiredDocuments,
} from '../../domain/requirements';

const UBO_A = '11111111-1111-4111-8111-111111111111';
const UBO_B = '22222222-2222-4222-8222-222222222222';

let seq = 0;
const doc = (
  documentType: string,
  status: RequirementDocument['status'],
  opts: { uboId?: string; at?: number; reason?: string } = {},
): RequirementDocument => ({
  id: `doc-${++seq}`,
  documentType,
  uboId: opts.uboId ?? null,
  status,
  reason: opts.reason ?? null,
  createdAt: new Date(opts.at ?? 1000),
});

const types = (entries: Array<{ documentType: string; uboId: string | null }>) =>
  entries.map((e) => `${e.documentType}:${e.uboId ?? '-'}`);

describe('requirements', () => {
  it('a company without UBOs needs its two company documents', () => {
    expect(types(requiredDocuments([]))).to.deep.equal(['CERTIFICATE_OF_INCORPORATION:-', 'PROOF_OF_ADDRESS:-']);
  });

  it('each UBO adds an ID_DOCUMENT carrying its uboId', () => {
    expect(types(requiredDocuments([UBO_A, UBO_B]))).to.deep.equal([
      'CERTIFICATE_OF_INCORPORATION:-',
      'PROOF_OF_ADDRESS:-',
      `ID_DOCUMENT:${UBO_A}`,
      `ID_DOCUMENT:${UBO_B}`,
    ]);
  });

  it('with no documents everything is currently due, in the documented entry shape', () => {
    const r = computeRequirements([UBO_A], []);
    expect(r.pendingVerification).to.deep.equal([]);
    expect(r.errors).to.deep.equal([]);
    expect(r.satisfied).to.deep.equal([]);
    expect(r.currentlyDue).to.have.length(3);
    expect(r.currentlyDue[0]).to.deep.equal({
      type: 'DOCUMENT',
      documentType: 'CERTIFICATE_OF_INCORPORATION',
      documentSubType: null,
      group: 'COMPANY',
      options: ['CERTIFICATE_OF_INCORPORATION'],
      uboId: null,
      requiredMetadata: [],
      metadata: {},
      reason: null,
    });
    expect(r.currentlyDue[2]).to.include({ documentType: 'ID_DOCUMENT', group: 'UBO', uboId: UBO_A });
    expect(readyForReview(r)).to.equal(false);
  });

  it('sorts each requirement by the status of its document', () => {
    const r = computeRequirements(
      [UBO_A],
      [
        doc('CERTIFICATE_OF_INCORPORATION', 'ACCEPTED'),
        doc('PROOF_OF_ADDRESS', 'PENDING_VERIFICATION'),
        doc('ID_DOCUMENT', 'REJECTED', { uboId: UBO_A, reason: 'blurry photo' }),
      ],
    );
    expect(types(r.satisfied)).to.deep.equal(['CERTIFICATE_OF_INCORPORATION:-']);
    expect(types(r.pendingVerification)).to.deep.equal(['PROOF_OF_ADDRESS:-']);
    expect(types(r.errors)).to.deep.equal([`ID_DOCUMENT:${UBO_A}`]);
    expect(r.errors[0].reason).to.include({ code: 'DOCUMENT_REJECTED', message: 'blurry photo' });
    expect(r.currentlyDue).to.deep.equal([]);
    expect(readyForReview(r)).to.equal(false);
  });

  it('the latest document per requirement wins: a re-upload supersedes a rejection', () => {
    const r = computeRequirements(
      [],
      [
        doc('PROOF_OF_ADDRESS', 'PENDING_VERIFICATION', { at: 3000 }),
        doc('PROOF_OF_ADDRESS', 'REJECTED', { at: 2000, reason: 'expired' }),
        doc('CERTIFICATE_OF_INCORPORATION', 'REJECTED', { at: 1000 }),
        doc('CERTIFICATE_OF_INCORPORATION', 'PENDING_VERIFICATION', { at: 1000 }),
      ],
    );
    expect(types(r.pendingVerification)).to.deep.equal(['CERTIFICATE_OF_INCORPORATION:-', 'PROOF_OF_ADDRESS:-']);
    expect(r.errors).to.deep.equal([]);
    expect(readyForReview(r)).to.equal(true);
  });

  it('ignores documents of UBOs the account no longer has and of unknown types', () => {
    const r = computeRequirements([], [doc('ID_DOCUMENT', 'ACCEPTED', { uboId: UBO_B }), doc('PASSPORT', 'ACCEPTED')]);
    expect(types(r.currentlyDue)).to.deep.equal(['CERTIFICATE_OF_INCORPORATION:-', 'PROOF_OF_ADDRESS:-']);
    expect(r.satisfied).to.deep.equal([]);
  });

  it('a UBO document is told apart by uboId', () => {
    const r = computeRequirements([UBO_A, UBO_B], [doc('ID_DOCUMENT', 'PENDING_VERIFICATION', { uboId: UBO_B })]);
    expect(types(r.pendingVerification)).to.deep.equal([`ID_DOCUMENT:${UBO_B}`]);
    expect(types(r.currentlyDue)).to.include(`ID_DOCUMENT:${UBO_A}`);
  });

  it('isRequired accepts exactly the required (documentType, uboId) pairs', () => {
    expect(isRequired([UBO_A], 'PROOF_OF_ADDRESS', null)).to.equal(true);
    expect(isRequired([UBO_A], 'ID_DOCUMENT', UBO_A)).to.equal(true);
    expect(isRequired([UBO_A], 'ID_DOCUMENT', null)).to.equal(false);
    expect(isRequired([UBO_A], 'ID_DOCUMENT', UBO_B)).to.equal(false);
    expect(isRequired([UBO_A], 'PROOF_OF_ADDRESS', UBO_A)).to.equal(false);
  });
});
