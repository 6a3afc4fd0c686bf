// AUTH_URL names the token endpoint when it is not the API's own (the spec: "served by the same server unless
// AUTH_URL points elsewhere"): read once at start-up, and a value that is not an http(s) URL stops the process there.
import { expect } from 'chai';
import { loadConfig } from '../../config';

const authUrl = (value?: string) => loadConfig(value === undefined ? {} : { AUTH_URL: value }).authUrl;

describe('AUTH_URL (config)', () => {
  it("is unset by default (the API's own address), and taken without a trailing slash", () => {
    expect(authUrl()).to.equal(undefined);
    expect(authUrl('https://auth.example.com/')).to.equal('https://auth.example.com');
    expect(authUrl('http://10.0.0.5:8443/identity')).to.equal('http://10.0.0.5:8443/identity');
    expect(authUrl(' https://Auth.Example.com ')).to.equal('https://auth.example.com');
  });

  it('refuses at start-up anything but an http or https base URL', () => {
    for (const v of ['auth.example.com', 'ftp://auth.example.com', 'https://', 'https://a.example?x=1', 'https://a#b'])
      expect(() => authUrl(v), v).to.throw(/AUTH_URL must be an http or https base URL/);
  });
});
