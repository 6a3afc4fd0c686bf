// The dev server a test run or a bench starts for itself (scripts/lib/temporal-server.js `temporalForRun`): a port
// found free can be taken before the server binds it, and the run must not fail for that. Here the port is taken on
// purpose, by a listener this test holds.
import { expect } from 'chai';
import net from 'node:net';

interface DevServer {
  address: string;
  child: unknown;
  stop(ms?: number): Promise<unknown>;
}

const servers = require('../../scripts/lib/temporal-server') as {
  startDevServer(o: Record<string, unknown>): Promise<DevServer>;
  temporalForRun(
    o: Record<string, unknown>,
  ): Promise<{ address: string; child?: { stop(ms?: number): Promise<unknown> } }>;
};
const binaries = require('../../scripts/lib/temporal-binary') as {
  ensureTemporalBinaries(o: object): { temporal: string };
  freePort(): Promise<number>;
};

/** A listener on a free port of 127.0.0.1, held until `close`. */
async function holdPort(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('the dev server of a run, on a port taken before it binds', function () {
  this.timeout(120000);
  const temporal = binaries.ensureTemporalBinaries({ log: () => undefined }).temporal;

  it('startDevServer rejects at once, saying the server exited', async () => {
    const held = await holdPort();
    try {
      const started = Date.now();
      const err = await servers
        .startDevServer({ temporal, port: held.port, headless: true, quiet: true, log: () => undefined })
        .then(
          () => undefined,
          (e: Error & { serverExited?: boolean }) => e,
        );
      expect(err, 'the server started on a taken port').to.be.instanceOf(Error);
      expect(err!.serverExited).to.equal(true);
      expect(err!.message).to.include('exited');
      expect(Date.now() - started).to.be.below(60000);
    } finally {
      await held.close();
    }
  });

  it('temporalForRun starts it again on another port and answers with that one', async () => {
    const held = await holdPort();
    const realFreePort = binaries.freePort;
    const external = process.env.TEMPORAL_ADDRESS;
    const logged: string[] = [];
    let run: Awaited<ReturnType<typeof servers.temporalForRun>> | undefined;
    // The first port it asks for is the held one, as if another process had bound it in between.
    let asked = 0;
    binaries.freePort = () => (asked++ === 0 ? Promise.resolve(held.port) : realFreePort());
    delete process.env.TEMPORAL_ADDRESS;
    try {
      run = await servers.temporalForRun({ temporal, namespace: 'default', log: (m: string) => logged.push(m) });
      expect(run.address).to.match(/^127\.0\.0\.1:\d+$/);
      expect(run.address).to.not.equal(`127.0.0.1:${held.port}`);
      // At least the held port and one more: a dev server of another shard starting at the same moment can take a
      // port of the second start too, and that one is started again in its turn.
      expect(asked).to.be.at.least(2);
      expect(logged.some((m) => m.includes('exited while starting'))).to.equal(true);
    } finally {
      binaries.freePort = realFreePort;
      if (external !== undefined) process.env.TEMPORAL_ADDRESS = external;
      await run?.child?.stop(10000);
      await held.close();
    }
  });
});
