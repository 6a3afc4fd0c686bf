import net from 'node:net';

// The HTTP/2 connection preface a gRPC client opens with, then frames: length (3 bytes), type, flags, stream id (4).
const PREFACE_LENGTH = 24;
const FRAME_HEADER_LENGTH = 9;
const HEADERS = 0x1;

/**
 * A TCP proxy in front of Temporal that lets a client's first `calls` gRPC calls through, then stalls: from the next
 * call on, nothing more is forwarded either way and no connection is closed or refused, as when a network partition
 * drops the packets or the server freezes. A client without a deadline waits on it.
 */
export class GrpcStallProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private callsSeen = 0;
  private stalled = false;
  // Hold mode: the call one too many and what follows it wait here (not dropped) until `release()`.
  private holding = false;
  private readonly heldWrites: Array<() => void> = [];
  private onHeld: () => void = () => undefined;
  /** Resolves once a call is held (hold mode): the client has sent it, Temporal has not seen it. */
  readonly held = new Promise<void>((resolve) => (this.onHeld = resolve));

  /**
   * `hold`: instead of stalling for good, the call one too many and everything after it is kept back until
   * `release()`, then delivered in order and the proxy carries everything: a call delayed at an exact point, so that
   * something else reaches Temporal first.
   */
  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
    private calls: number,
    private readonly mode: 'stall' | 'hold' = 'stall',
  ) {}

  /** Hold mode: what was kept back reaches Temporal, and from now on every call goes through. */
  release(): void {
    this.calls = Infinity;
    this.holding = false;
    for (const write of this.heldWrites.splice(0)) write();
  }

  async open(): Promise<void> {
    const server = net.createServer((client) => this.connect(client));
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.server = server;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server?.close(r) ?? r(undefined));
  }

  private connect(client: net.Socket): void {
    this.track(client);
    if (this.stalled) return; // accepted, never answered
    const upstream = net.connect(this.target.port, this.target.host);
    this.track(upstream);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.on('data', (chunk: Buffer) => {
      if (!this.stalled) client.write(chunk);
    });
    let pending = Buffer.alloc(0);
    let prefaceLeft = PREFACE_LENGTH;
    client.on('data', (chunk: Buffer) => {
      if (this.stalled) return;
      // Released: carried as it comes (what was held may have ended inside a frame: no parsing from here on).
      if (this.calls === Infinity && pending.length === 0) return void upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      if (this.holding) return; // kept back whole: delivered by release()
      const skip = Math.min(prefaceLeft, pending.length);
      prefaceLeft -= skip;
      let at = skip;
      // Forward whole frames until the frame that opens one call too many.
      while (pending.length - at >= FRAME_HEADER_LENGTH) {
        const length = pending.readUIntBE(at, 3);
        if (pending.length - at < FRAME_HEADER_LENGTH + length) break;
        if (pending[at + 3] === HEADERS && ++this.callsSeen > this.calls) {
          if (this.mode === 'stall') this.stalled = true;
          else this.holding = true;
          break;
        }
        at += FRAME_HEADER_LENGTH + length;
      }
      upstream.write(pending.subarray(0, at));
      pending = pending.subarray(at);
      if (this.holding) {
        this.heldWrites.push(() => {
          upstream.write(pending);
          pending = Buffer.alloc(0);
        });
        this.onHeld();
      }
    });
  }

  private track(s: net.Socket): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => undefined);
  }
}
