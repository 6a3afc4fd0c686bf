import net from 'node:net';

/**
 * A TCP proxy in front of a dependency (Postgres, Temporal) that a test cuts (every connection dropped, port closed)
 * and opens again. Until `open()` nothing listens on its port: a dependency that is down.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  constructor(
    readonly port: number,
    private readonly target = { host: '127.0.0.1', port: 5432 },
  ) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => server?.close(r) ?? r(undefined));
  }
}
