import type Koa from 'koa';
import type { RouteTable } from './define';
import type { ServiceContext } from '../../services/context';
import type { Em } from '../../db/orm';
import { listQuerySchema, ListQuery } from '../../lists/run-list';
import { createAccount, CreateAccountInput, getAccount, listAccounts } from '../../services/accounts';
import { PageCache, servePage } from '../../db/lists/page-copies';
import { countListPage } from '../observability/metrics';
import { presentAccountRecord, presentDocument, presentUbo } from '../../presenters/account';
import { addUbo, DocumentInput, patchUbo, uploadDocument, UboInput, UboPatch } from '../../services/account-onboarding';
import { applyAccountDecision, recordAccountDecision, submitReview } from '../../services/account-review';
import { sandboxDecision } from './sandbox-decision';
import type { AccountDecision } from '../../workflows/account-review';
import {
  accountParams,
  createAccountBody,
  createUboBody,
  patchUboBody,
  reviewDecisionBody,
  uboParams,
  uploadDocumentBody,
} from '../schemas/accounts';
import { pageOf, ref } from '../schemas/responses';

const TAG = 'Accounts';
const em = (ctx: Koa.Context): Em => ctx.state.em;
const body = <T>(ctx: Koa.Context) => ctx.request.body as T;

export function accountRoutes(table: RouteTable, s: ServiceContext): void {
  // This process's copies of account list pages, each checked against the list's version before it answers.
  const pages = new PageCache(s.config.listCacheBytes);

  table.add({
    method: 'post',
    path: '/api/accounts',
    summary: 'Create an account owned by a company; it starts ACTION_REQUIRED with its assets ONBOARDING',
    tag: TAG,
    body: createAccountBody,
    bodyRequired: true,
    response: { status: 201, schema: ref('Account') },
    async handler(ctx) {
      ctx.body = presentAccountRecord(await createAccount(em(ctx), body<CreateAccountInput>(ctx)));
      ctx.status = 201;
    },
  });

  table.add({
    method: 'get',
    path: '/api/accounts',
    summary:
      'List accounts (filters: currentState.status, owner.legalName, createdAt, tags.key, tags.value, assets.asset)',
    tag: TAG,
    query: listQuerySchema,
    response: { status: 200, schema: pageOf('Account') },
    async handler(ctx) {
      ctx.type = 'json';
      ctx.body = await accountsPageJson(em(ctx), pages, ctx.state.query as ListQuery, s.config.cursorSecret);
    },
  });

  table.add({
    method: 'get',
    path: '/api/accounts/:accountId',
    summary: 'Retrieve an account with its UBOs and requirements',
    tag: TAG,
    params: accountParams,
    response: { status: 200, schema: ref('Account') },
    async handler(ctx) {
      ctx.body = presentAccountRecord(await getAccount(em(ctx), ctx.params.accountId));
    },
  });

  table.add({
    method: 'post',
    path: '/api/accounts/:accountId/ubos',
    summary: 'Add a beneficial owner (PENDING); it adds an ID_DOCUMENT requirement',
    tag: TAG,
    params: accountParams,
    body: createUboBody,
    bodyRequired: true,
    response: { status: 201, schema: ref('Ubo') },
    errors: ['INVALID_STATE'],
    async handler(ctx) {
      ctx.body = presentUbo(await addUbo(em(ctx), ctx.params.accountId, body<UboInput>(ctx)));
      ctx.status = 201;
    },
  });

  table.add({
    method: 'patch',
    path: '/api/accounts/:accountId/ubos/:uboId',
    summary: 'Change a beneficial owner (only given fields change; ownershipPercentage may be null)',
    tag: TAG,
    params: uboParams,
    body: patchUboBody,
    bodyRequired: true,
    response: { status: 200, schema: ref('Ubo') },
    errors: ['INVALID_STATE'],
    async handler(ctx) {
      ctx.body = presentUbo(await patchUbo(em(ctx), ctx.params.accountId, ctx.params.uboId, body<UboPatch>(ctx)));
    },
  });

  table.add({
    method: 'post',
    path: '/api/accounts/:accountId/documents',
    summary: 'Upload an onboarding document (base64, at most 5 MiB decoded) for one of the requirements',
    tag: TAG,
    params: accountParams,
    body: uploadDocumentBody,
    bodyRequired: true,
    response: { status: 201, schema: ref('Document') },
    errors: ['INVALID_STATE', 'DOCUMENT_STORAGE_LIMIT_REACHED'],
    async handler(ctx) {
      const doc = await uploadDocument(em(ctx), ctx.params.accountId, body<DocumentInput>(ctx), s.config);
      ctx.body = presentDocument(doc);
      ctx.status = 201;
    },
  });

  table.add({
    method: 'post',
    path: '/api/accounts/:accountId/review',
    summary: 'Submit the account for compliance review once nothing is currently due',
    tag: TAG,
    params: accountParams,
    // No body is expected; an empty object is tolerated, anything else is refused.
    body: { type: 'object', additionalProperties: false, maxProperties: 0 },
    bodyRequired: false,
    response: { status: 202, schema: ref('Account'), description: 'Accepted: the account is UNDER_REVIEW' },
    errors: ['INVALID_STATE', 'REQUIREMENTS_NOT_MET'],
    async handler(ctx) {
      ctx.body = presentAccountRecord(await submitReview(s, em(ctx), ctx.params.accountId));
      ctx.status = 202;
    },
  });

  table.add({
    method: 'post',
    path: '/api/sandbox/accounts/:accountId/review',
    summary: 'Sandbox only: approve or reject an account UNDER_REVIEW as a compliance reviewer would',
    tag: 'Sandbox',
    sandbox: true,
    params: accountParams,
    body: reviewDecisionBody,
    bodyRequired: true,
    response: { status: 200, schema: ref('Account') },
    errors: ['INVALID_STATE'],
    // Recorded, applied by the review workflow, answered: no transaction stays open while the workflow works.
    ownsIdempotency: true,
    async handler(ctx) {
      const { accountId } = ctx.params;
      await sandboxDecision(
        ctx,
        (tx, who) => recordAccountDecision(s, tx, accountId, body<AccountDecision>(ctx), who),
        async (requestEm, decisionId) =>
          presentAccountRecord(await applyAccountDecision(s, requestEm, accountId, decisionId)),
        async (answerEm) => presentAccountRecord(await getAccount(answerEm, accountId)),
      );
    },
  });
}

/**
 * GET /api/accounts as JSON bytes: from this process's copy of the page when the list has not changed since it
 * was read (`servePage`), else read, presented and kept.
 */
function accountsPageJson(em: Em, cache: PageCache, query: ListQuery, cursorSecret: string): Promise<Buffer> {
  const read = async () => {
    const { page, version } = await listAccounts(em, query, cursorSecret);
    return { body: { data: page.data.map(presentAccountRecord), meta: page.meta }, version };
  };
  return servePage(em, cache, 'accounts', query, read, countListPage);
}
