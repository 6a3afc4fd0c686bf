import { createServer, type RequestListener } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { PixClient } from '../../rails/pix/client';
import { PixRail } from '../../rails/pix/connector';

/**
 * A PIX connector against a throwaway PSP of the test's own (`handler` answers every call, the token included), for
 * answers the simulator does not give. `close` ends both.
 */
export async function pixRailAgainst(handler: RequestListener): Promise<{ rail: PixRail; close(): Promise<void> }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const client = new PixClient({
    baseUrl: `http://127.0.0.1:${port}`,
    clientId: 'c',
    clientSecret: 's',
    timeoutMs: 5000,
  });
  const rail = new PixRail(client, {
    receivingKey: 'key@example.com',
    receivingKeyType: 'EMAIL',
    webhookToken: 'token',
    merchantName: 'Cambio',
    merchantCity: 'Sao Paulo',
  });
  return {
    rail,
    async close() {
      await rail.close();
      server.close();
    },
  };
}
