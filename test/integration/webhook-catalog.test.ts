// The event catalogue of /openapi.json (OpenAPI 3.1 `webhooks`) against real deliveries: every event type is
// caused through the API, received by a real receiver, and its body validated (Ajv) against the published
// payload schema; the events API returns each of them with the body the delivery carried, byte for byte.
import { expect } from 'chai';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { EVENT_TYPES } from '../../webhooks/event-types';
import { issueStatements } from '../../statements/issue';
import { approvedInstruction, beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { activeAccount } from '../helpers/fixtures';
import { fund, quote, untilStatus } from '../helpers/money';
import { Receiver } from '../helpers/receiver';
import { eventually, idem, newCustomer, stack } from '../helpers/stack';

describe('webhook event catalogue (/openapi.json webhooks)', function () {
  this.timeout(120000);
  let r: Receiver;
  after(async () => r?.stop());

  it('declares every event type with its headers, and each validates a real delivery body', async () => {
    const { http } = await stack();
    const doc = (await http.get('/openapi.json')).body;
    expect(Object.keys(doc.webhooks).sort()).to.deep.equal([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const parameters = doc.webhooks[type].post.parameters as Array<{ in: string; name: string }>;
      const headers = parameters.filter((p) => p.in === 'header').map((p) => p.name);
      expect(headers, type).to.include.members(['X-Event-Type', 'X-Message-Id']);
      expect(headers, type).to.include.members(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    }

    // Every kind of event, caused as a client would.
    const c = await newCustomer();
    r = await new Receiver().start();
    const sub = await http.post('/api/subscriptions').set(c.auth).set(idem()).send({ url: r.url, includeAll: true });
    expect(sub.status).to.equal(201);
    const account = await activeAccount(c, ['BRL', 'USDC']); // ASSET_ACTIVATED
    await fund(c, account.id, 'BRL', '100.00'); // OPERATION_REQUESTED, OPERATION_COMPLETED
    // CREATED, APPROVED
    const failing = await approvedInstruction(c, { dictKeyType: 'EMAIL', dictKey: 'payout-fails@example.com' });
    const rejectedBody = beneficiaryBody(pixInstruction('EMAIL', 'no@example.com'));
    const rejected = await http.post('/api/beneficiaries').set(c.auth).set(idem()).send(rejectedBody);
    const review = await http
      .post(`/api/sandbox/payment-instructions/${rejected.body.paymentInstructions[0].id}/review`)
      .set(c.auth)
      .set(idem())
      .send({ decision: 'REJECT', reason: 'test' }); // REJECTED
    expect(review.status).to.equal(200);
    const q = await quote(c, { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '10.00' });
    const withdrawal = await http
      .post('/api/operations/withdrawal')
      .set(c.auth)
      .set(idem())
      .send({
        accountId: account.id,
        quoteId: q.id,
        beneficiary: {
          type: 'REFERENCE',
          id: failing.beneficiaryId,
          paymentInstruction: { type: 'REFERENCE', id: failing.instructionId },
        },
      });
    expect(withdrawal.status).to.equal(201);
    await untilStatus(c, withdrawal.body.id, 'FAILED'); // OPERATION_FAILED
    const swapQuote = await quote(c, {
      accountId: account.id,
      sourceAsset: 'BRL',
      targetAsset: 'USDC',
      sourceAmount: '20.00',
    });
    const swapBody = { accountId: account.id, quoteId: swapQuote.id };
    const swap = await http.post('/api/operations/swap').set(c.auth).set(idem()).send(swapBody);
    expect(swap.status).to.equal(201);
    await untilStatus(c, swap.body.id, 'COMPLETED'); // an operation event with a quote
    // STATEMENT_ISSUED: what the statement schedule's run does, for the one-second period that just closed.
    const { services, config } = await stack();
    const issuing = { statementInterval: 'PT1S', webhookTaskQueue: config.webhookTaskQueue };
    // Issuing covers accounts opened before the period's end: let the account's own second close first.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await issueStatements({ orm: services.orm, config: issuing }, new Date());

    const typeOf = (i: number) => String(r.received[i].headers['x-event-type']);
    const typesReceived = async () => new Set(r.received.map((_, i) => typeOf(i))).size;
    await eventually(typesReceived, (n) => n === EVENT_TYPES.length, 30000);

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'openapi.json');
    type Event = { id: string; payload: unknown };
    const list = (await http.get('/api/events?limit=100').set(c.auth)).body;
    const events = list.data as Event[];
    // The events API's own answers conform to the document too.
    const one = (await http.get(`/api/events/${events[0].id}`).set(c.auth)).body;
    for (const [path, body] of [
      ['/api/events', list],
      ['/api/events/{eventId}', one],
    ] as const) {
      const escaped = path.replace(/\//g, '~1');
      const pointer = `openapi.json#/paths/${escaped}/get/responses/200/content/application~1json/schema`;
      const validate = ajv.getSchema(pointer)!;
      expect(validate(body), `${path}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
    }
    for (let i = 0; i < r.received.length; i++) {
      const type = typeOf(i);
      const pointer = `openapi.json#/webhooks/${type}/post/requestBody/content/application~1json/schema`;
      const validate = ajv.getSchema(pointer)!;
      expect(validate, type).to.be.a('function');
      expect(validate({}), `${type}: the schema refuses {}`).to.equal(false);
      const body = JSON.parse(r.received[i].body);
      expect(validate(body), `${type}: ${ajv.errorsText(validate.errors)}\n${r.received[i].body}`).to.equal(true);
      // An operation event's intent is described field by field, not only "as on the operation".
      const declaredIntent = doc.components.schemas.OperationEvent.properties.intent.properties;
      for (const field of Object.keys(body.intent ?? {}))
        expect(declaredIntent, `${type}: intent.${field} (${body.intent.type}) is declared`).to.have.property(field);
      expect(r.received[i].headers['webhook-id']).to.equal(r.received[i].headers['x-message-id']);
      expect(r.received[i].headers['webhook-timestamp']).to.match(/^\d+$/);
      // The events API returns the same body, key order included.
      const same = events.filter((e) => JSON.stringify(e.payload) === r.received[i].body);
      expect(same, `${type}: an event with the delivered body`).to.have.length(1);
    }
  });
});
