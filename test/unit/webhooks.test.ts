import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../../config';
import { EVENT_TYPES, allResources } from '../../webhooks/event-types';
import { newWebhookSecret, openSecret, sealSecret } from '../../webhooks/secrets';
import { parseRetryAfter, signedHeaders } from '../../webhooks/send';
import { checkWebhookUrl, isPublicAddress } from '../../webhooks/url-policy';

describe('webhooks (pure parts)', () => {
  it('seals secrets so that only the configured key opens them', () => {
    const secret = newWebhookSecret();
    const sealed = sealSecret(secret, 'k1');
    expect(sealed).to.not.include(secret.slice(6));
    expect(openSecret(sealed, 'k1')).to.equal(secret);
    expect(() => openSecret(sealed, 'k2')).to.throw();
    expect(sealSecret(secret, 'k1')).to.not.equal(sealed); // a fresh IV each time
  });

  it('signs with every live secret, newest first, in a form the standardwebhooks library verifies', () => {
    const [fresh, old] = [newWebhookSecret(), newWebhookSecret()];
    const at = new Date();
    const headers = signedHeaders(
      { messageId: 'msg_1', eventType: 'OPERATION_COMPLETED', payload: '{"a":1}' },
      [fresh, old],
      at,
    );
    expect(headers).to.include({
      'webhook-id': 'msg_1',
      'x-message-id': 'msg_1',
      'x-event-type': 'OPERATION_COMPLETED',
      'content-type': 'application/json',
    });
    expect(headers['webhook-timestamp']).to.equal(String(Math.floor(at.getTime() / 1000)));
    expect(headers['webhook-signature'].split(' ')[0]).to.equal(new Webhook(fresh).sign('msg_1', at, '{"a":1}'));
    expect(new Webhook(old).verify('{"a":1}', headers)).to.deep.equal({ a: 1 });
    expect(() => new Webhook(newWebhookSecret()).verify('{"a":1}', headers)).to.throw();
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('120')).to.equal(120);
    expect(parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1))).to.equal(600);
    expect(parseRetryAfter(undefined)).to.equal(undefined);
    expect(parseRetryAfter('soon')).to.equal(undefined);
  });

  it('judges addresses public or not, IPv4-mapped IPv6 by its IPv4', () => {
    expect(isPublicAddress('8.8.8.8')).to.equal(true);
    expect(isPublicAddress('10.0.0.1')).to.equal(false);
    expect(isPublicAddress('::ffff:169.254.169.254')).to.equal(false);
    // IPv4-compatible (::127.0.0.1 is written ::7f00:1) and IPv4-translated forms of a loopback address.
    expect(isPublicAddress('::7f00:1')).to.equal(false);
    expect(isPublicAddress('::ffff:0:7f00:1')).to.equal(false);
    // 6to4 addresses carrying a loopback or private IPv4 address; one carrying a public one stays public.
    expect(isPublicAddress('2002:7f00:1::')).to.equal(false);
    expect(isPublicAddress('2002:a00:1::1')).to.equal(false);
    expect(isPublicAddress('2002:808:808::1')).to.equal(true);
    expect(isPublicAddress('2606:4700:4700::1111')).to.equal(true);
    expect(isPublicAddress('not-an-ip')).to.equal(false);
  });

  it('accepts http and private hosts only when allowed, and never credentials in the URL', async () => {
    const resolve = async () => ['10.0.0.1'];
    await checkWebhookUrl('http://127.0.0.1:9/h', { allowPrivate: true, resolve });
    for (const url of ['http://example.com/h', 'https://example.com/h']) {
      const err = await checkWebhookUrl(url, { allowPrivate: false, resolve }).catch((e) => e);
      expect(err.code, url).to.equal('INVALID_WEBHOOK_URL');
    }
    const creds = await checkWebhookUrl('https://u:p@example.com/h', { allowPrivate: true, resolve }).catch((e) => e);
    expect(creds.code).to.equal('INVALID_WEBHOOK_URL');
    const ok = await checkWebhookUrl('https://example.com/h', {
      allowPrivate: false,
      resolve: async () => ['93.184.216.34'],
    });
    expect(ok.address).to.equal('93.184.216.34');
  });

  it('reads the retry schedule and timeout from the environment', () => {
    expect(loadConfig({}).webhookRetryScheduleSeconds).to.deep.equal([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(loadConfig({}).webhookTimeoutSeconds).to.equal(10);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE_SECONDS: '1, 2,3' }).webhookRetryScheduleSeconds).to.deep.equal([
      1, 2, 3,
    ]);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE_SECONDS: '' }).webhookRetryScheduleSeconds).to.deep.equal([]);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE_SECONDS: '5,x' })).to.throw(/WEBHOOK_RETRY_SCHEDULE_SECONDS/);
  });

  it('includeAll covers every event type exactly once', () => {
    expect(
      allResources()
        .flatMap((r) => r.events)
        .sort(),
    ).to.deep.equal([...EVENT_TYPES].sort());
  });
});
