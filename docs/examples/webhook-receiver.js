// A webhook receiver for trying Cambio locally: verifies each delivery's signature with the Standard Webhooks
// library and prints (and appends to WEBHOOK_LOG, when set) the event type and the body it received.
// Run: CAMBIO_WEBHOOK_SECRET=whsec_... RECEIVER_PORT=4000 node docs/examples/webhook-receiver.js
const http = require('node:http');
const fs = require('node:fs');
const { Webhook } = require('standardwebhooks');

const webhook = new Webhook(process.env.CAMBIO_WEBHOOK_SECRET);
const port = Number(process.env.RECEIVER_PORT || 4000);

http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        webhook.verify(body, req.headers); // the raw body, as received: throws if forged or stale
      } catch (err) {
        console.log(`rejected: ${err.message}`);
        return res.writeHead(400).end();
      }
      const line = `${req.headers['x-event-type']} ${body}\n`;
      process.stdout.write(line);
      if (process.env.WEBHOOK_LOG) fs.appendFileSync(process.env.WEBHOOK_LOG, line);
      res.writeHead(204).end(); // any 2xx within WEBHOOK_TIMEOUT_SECONDS is a success
    });
  })
  .listen(port, '127.0.0.1', () => console.log(`receiving webhooks on http://127.0.0.1:${port}/`));
