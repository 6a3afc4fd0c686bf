// GET /docs: the interactive API reference, rendered in the browser from /openapi.json by a bundle this app
// serves itself (no CDN, works offline).
import { expect } from 'chai';
import { stack } from '../helpers/stack';

describe('/docs', () => {
  it('is an HTML page that loads only local assets and points the renderer at /openapi.json', async () => {
    const { http } = await stack();
    const res = await http.get('/docs');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^text\/html/);
    expect(res.headers['x-request-id']).to.be.a('string');
    expect(res.text).to.include('spec-url="/openapi.json"');
    const sources = [...res.text.matchAll(/(?:src|href|spec-url)="([^"]*)"/g)].map((m) => m[1]);
    expect(sources).to.include('/docs/assets/redoc.standalone.js');
    for (const source of sources) expect(source, 'a local, absolute path').to.match(/^\/[^/]/);
    expect(res.text).not.to.match(/https?:\/\//);
  });

  it('serves the renderer bundle it references', async () => {
    const { http } = await stack();
    const res = await http
      .get('/docs/assets/redoc.standalone.js')
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^application\/javascript/);
    const js = (res.body as Buffer).toString('utf8');
    expect(js.length).to.be.greaterThan(100_000);
    // The standalone bundle defines the global the page's <redoc> element needs.
    expect(js).to.include('Redoc');
  });

  it('answers an unknown asset with 404 in the error shape', async () => {
    const { http } = await stack();
    const res = await http.get('/docs/assets/nothing.js');
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('NOT_FOUND');
  });
});
