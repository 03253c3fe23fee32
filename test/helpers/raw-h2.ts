// A bare HTTP/2 client over a TCP socket that writes frames exactly as a test
// says, where node:http2's client would hold them back: it opens streams past
// the server's SETTINGS_MAX_CONCURRENT_STREAMS and leaves request bodies half
// sent. It decodes only what the tests read: frame headers, RST_STREAM codes,
// GOAWAY and SETTINGS. Header blocks are written as HPACK literals without
// indexing or Huffman coding (RFC 7541, 6.2.2), which every decoder accepts.
import net from "node:net";
import { HTTP2_PREFACE } from "../../sidecar/http/listener.ts";

/** RFC 9113, 6: frame types. */
export const FrameType = { Data: 0, Headers: 1, RstStream: 3, Settings: 4, Ping: 6, GoAway: 7, WindowUpdate: 8 } as const;
/** RFC 9113, 6: frame flags. */
export const Flag = { EndStream: 0x1, Ack: 0x1, EndHeaders: 0x4 } as const;
/** RFC 9113, 6.5.2: SETTINGS identifiers. */
export const Setting = { MaxConcurrentStreams: 0x3 } as const;

export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** RFC 7541, 5.1: an integer with a 7-bit prefix (the H bit clear). */
function hpackInteger(value: number): Buffer {
  if (value < 127) return Buffer.from([value]);
  const bytes = [127];
  let rest = value - 127;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function hpackLiteral(name: string, value: string): Buffer {
  const n = Buffer.from(name, "latin1");
  const v = Buffer.from(value, "latin1");
  return Buffer.concat([Buffer.from([0x00]), hpackInteger(n.length), n, hpackInteger(v.length), v]);
}

export class RawH2Client {
  readonly socket: net.Socket;
  readonly frames: Frame[] = [];
  readonly closed: Promise<void>;
  #buffered = Buffer.alloc(0);
  #waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  #nextStreamId = 1;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    socket.on("error", () => {});
    socket.on("data", (chunk: Buffer) => this.#read(chunk));
  }

  /**
   * Connects with prior knowledge, sends the preface and empty SETTINGS, and
   * acknowledges the server's SETTINGS, unless `acknowledge` is false: until
   * then the server's new values are pending (RFC 9113, 6.5.3).
   */
  static async connect(port: number, options: { acknowledge?: boolean } = {}): Promise<RawH2Client> {
    const socket = net.connect(port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    const client = new RawH2Client(socket);
    socket.write(Buffer.concat([HTTP2_PREFACE, frame(FrameType.Settings, 0, 0)]));
    await client.next((f) => f.type === FrameType.Settings && (f.flags & Flag.Ack) === 0);
    if (options.acknowledge === false) return client;
    socket.write(frame(FrameType.Settings, Flag.Ack, 0));
    // Once the server has our acknowledgement its SETTINGS are in force (RFC 9113, 6.5.3).
    await client.next((f) => f.type === FrameType.Settings && (f.flags & Flag.Ack) !== 0);
    return client;
  }

  /** The server's SETTINGS values from the first SETTINGS frame, by identifier. */
  serverSettings(): Map<number, number> {
    const settings = new Map<number, number>();
    const first = this.frames.find((f) => f.type === FrameType.Settings && (f.flags & Flag.Ack) === 0);
    for (let i = 0; first !== undefined && i + 6 <= first.payload.length; i += 6) {
      settings.set(first.payload.readUInt16BE(i), first.payload.readUInt32BE(i + 2));
    }
    return settings;
  }

  /** Opens a stream with these headers (pseudo-headers first); `endStream` false leaves the request body to come. Returns its id. */
  request(headers: Array<[string, string]>, options: { endStream: boolean }): number {
    const streamId = this.#nextStreamId;
    this.#nextStreamId += 2;
    const block = Buffer.concat(headers.map(([name, value]) => hpackLiteral(name, value)));
    this.socket.write(frame(FrameType.Headers, Flag.EndHeaders | (options.endStream ? Flag.EndStream : 0), streamId, block));
    return streamId;
  }

  data(streamId: number, bytes: string | Buffer, options: { endStream: boolean }): void {
    this.socket.write(frame(FrameType.Data, options.endStream ? Flag.EndStream : 0, streamId, Buffer.from(bytes)));
  }

  /** The first frame, already received or still to come, that `match` accepts. */
  next(match: (f: Frame) => boolean): Promise<Frame> {
    const seen = this.frames.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  /** The RST_STREAM error code the server sent for `streamId`. */
  async resetCode(streamId: number): Promise<number> {
    const rst = await this.next((f) => f.type === FrameType.RstStream && f.streamId === streamId);
    return rst.payload.readUInt32BE(0);
  }

  /** Received frames of one stream. */
  framesOf(streamId: number): Frame[] {
    return this.frames.filter((f) => f.streamId === streamId);
  }

  close(): void {
    this.socket.destroy();
  }

  #read(chunk: Buffer): void {
    this.#buffered = Buffer.concat([this.#buffered, chunk]);
    while (this.#buffered.length >= 9) {
      const length = this.#buffered.readUIntBE(0, 3);
      if (this.#buffered.length < 9 + length) return;
      const f: Frame = {
        type: this.#buffered.readUInt8(3),
        flags: this.#buffered.readUInt8(4),
        streamId: this.#buffered.readUInt32BE(5) & 0x7fffffff,
        payload: Buffer.from(this.#buffered.subarray(9, 9 + length)),
      };
      this.#buffered = this.#buffered.subarray(9 + length);
      // A PING must be answered, or the server may take the peer for dead.
      if (f.type === FrameType.Ping && (f.flags & Flag.Ack) === 0) this.socket.write(frame(FrameType.Ping, Flag.Ack, 0, f.payload));
      this.frames.push(f);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.match(f)) return true;
        w.resolve(f);
        return false;
      });
    }
  }
}
