// Onboarding requirements (../shared/spec/decisions.md, "Onboarding"; decision 0008): which documents an account
// needs and where each one stands. Pure: derived from the account's UBOs and uploaded documents on every read, never
// stored, so it cannot drift from the documents themselves.

export const COMPANY_DOCUMENT_TYPES = ['CERTIFICATE_OF_INCORPORATION', 'PROOF_OF_ADDRESS'] as const;
export const UBO_DOCUMENT_TYPES = ['ID_DOCUMENT'] as const;
export const DOCUMENT_TYPES = [...COMPANY_DOCUMENT_TYPES, ...UBO_DOCUMENT_TYPES] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

export type DocumentStatus = 'PENDING_VERIFICATION' | 'ACCEPTED' | 'REJECTED';

/** What the computation needs of an uploaded document. */
export interface RequirementDocument {
  id: string;
  documentType: string;
  uboId: string | null;
  status: DocumentStatus;
  reason: string | null;
  createdAt: Date;
}

export interface RequirementReason {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

export interface Requirement {
  type: 'DOCUMENT';
  documentType: DocumentType;
  documentSubType: null;
  group: 'COMPANY' | 'UBO';
  options: DocumentType[];
  uboId: string | null;
  requiredMetadata: string[];
  metadata: Record<string, unknown>;
  reason: RequirementReason | null;
}

export interface Requirements {
  currentlyDue: Requirement[];
  pendingVerification: Requirement[];
  errors: Requirement[];
  satisfied: Requirement[];
}

/** The documents an account with these UBOs needs, company documents first, then one per UBO. */
export function requiredDocuments(
  uboIds: readonly string[],
): Array<{ documentType: DocumentType; uboId: string | null }> {
  return [
    ...COMPANY_DOCUMENT_TYPES.map((documentType) => ({ documentType, uboId: null })),
    ...uboIds.flatMap((uboId) => UBO_DOCUMENT_TYPES.map((documentType) => ({ documentType, uboId }))),
  ];
}

/** True when `documentType`/`uboId` names one of the requirements of an account with these UBOs. */
export function isRequired(uboIds: readonly string[], documentType: string, uboId: string | null): boolean {
  return requiredDocuments(uboIds).some((r) => r.documentType === documentType && r.uboId === uboId);
}

const keyOf = (documentType: string, uboId: string | null) => `${documentType}:${uboId ?? ''}`;

/**
 * Sorts every requirement by its latest document (a re-upload supersedes a rejected one): none → currentlyDue,
 * PENDING_VERIFICATION → pendingVerification, ACCEPTED → satisfied, REJECTED → errors with the reviewer's reason.
 * On equal timestamps the later element of `documents` wins, so callers pass them in upload order.
 */
export function computeRequirements(
  uboIds: readonly string[],
  documents: readonly RequirementDocument[],
): Requirements {
  const latest = new Map<string, RequirementDocument>();
  for (const doc of documents) {
    const key = keyOf(doc.documentType, doc.uboId);
    const seen = latest.get(key);
    if (!seen || seen.createdAt.getTime() <= doc.createdAt.getTime()) latest.set(key, doc);
  }
  const out: Requirements = { currentlyDue: [], pendingVerification: [], errors: [], satisfied: [] };
  for (const { documentType, uboId } of requiredDocuments(uboIds)) {
    const doc = latest.get(keyOf(documentType, uboId));
    const entry: Requirement = {
      type: 'DOCUMENT',
      documentType,
      documentSubType: null,
      group: uboId === null ? 'COMPANY' : 'UBO',
      options: [documentType],
      uboId,
      requiredMetadata: [],
      metadata: {},
      reason: null,
    };
    if (!doc) out.currentlyDue.push(entry);
    else if (doc.status === 'PENDING_VERIFICATION') out.pendingVerification.push(entry);
    else if (doc.status === 'ACCEPTED') out.satisfied.push(entry);
    else {
      out.errors.push({
        ...entry,
        reason: {
          code: 'DOCUMENT_REJECTED',
          message: doc.reason ?? 'document rejected',
          details: { documentId: doc.id },
        },
      });
    }
  }
  return out;
}

/** A review can be submitted only when nothing is missing and nothing was rejected without a re-upload. */
export const readyForReview = (r: Requirements): boolean => r.currentlyDue.length === 0 && r.errors.length === 0;
