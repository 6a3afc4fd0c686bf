import net from 'node:net';

/**
 * A TCP proxy in front of a dependency (Postgres, Temporal) that a test cuts (every connection dropped, port closed)
 * and opens again, or stalls (connections stay open and carry nothing, as from a frozen host) and resumes. Until
 * `open()` nothing listens on its port: a dependency that is down.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  // Each connection's two ends, piped both ways unless stalled.
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private stalled = false;
  /**
   * `replyDelayMs`: what the dependency sends reaches the client that much later (each chunk, in order), while what
   * the client sends goes through at once: a request has taken effect a while before its caller learns it did.
   */
  constructor(
    readonly port: number,
    private readonly target = { host: '127.0.0.1', port: 5432 },
    private readonly replyDelayMs = 0,
  ) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      const pair: [net.Socket, net.Socket] = [client, upstream];
      for (const s of pair) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      this.pairs.add(pair);
      if (this.replyDelayMs > 0) {
        client.pipe(upstream);
        upstream.on('data', (chunk: Buffer) => setTimeout(() => client.write(chunk), this.replyDelayMs));
      } else if (this.stalled) for (const s of pair) s.pause();
      else connect(pair);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => {
        client.destroy();
        this.pairs.delete(pair);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }

  /** Connections stay open, and what either end sends waits (read no further) until `resume()`. */
  stall(): void {
    this.stalled = true;
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** What waited is delivered, and the connections carry again. */
  resume(): void {
    if (!this.stalled) return;
    this.stalled = false;
    for (const pair of this.pairs) connect(pair);
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => server?.close(r) ?? r(undefined));
  }
}

const connect = ([client, upstream]: [net.Socket, net.Socket]) => client.pipe(upstream).pipe(client);
