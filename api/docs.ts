import { readFile } from 'node:fs/promises';
import type Router from '@koa/router';

// The interactive API reference: Redoc's standalone bundle, served from node_modules by this app, renders
// /openapi.json in the browser. No CDN and no fonts from elsewhere, so it works offline and behind a firewall.
// Redoc rather than Scalar: one 1.1 MB file and about 90 packages installed, against Scalar's 4 MB bundle
// and 290 MB of dependencies (decision 0033).
const REDOC_PATH = require.resolve('redoc/bundles/redoc.standalone.js');
export const DOCS_ASSET = '/docs/assets/redoc.standalone.js';

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Cambio API reference</title>
  <style>body { margin: 0; padding: 0; }</style>
</head>
<body>
  <redoc spec-url="/openapi.json" expand-responses="200,201,202" path-in-middle-panel required-props-first></redoc>
  <script src="${DOCS_ASSET}"></script>
</body>
</html>
`;

let bundle: Promise<Buffer> | undefined;

/** GET /docs (the page) and the bundle it loads. */
export function registerDocs(router: Router): void {
  router.get('/docs', (ctx) => {
    ctx.type = 'html';
    ctx.body = PAGE;
  });
  router.get(DOCS_ASSET, async (ctx) => {
    // Read once, on first use: most processes never serve it.
    bundle ??= readFile(REDOC_PATH);
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = await bundle;
  });
}
