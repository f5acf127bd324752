// A tRPC WebSocket spoken by hand over a raw TCP socket, as a client that does not play by the
// rules would: it keeps sending after the server's close frame (a library client stops), and
// keeps its writing side open when the server ends its own (allowHalfOpen). Tests use it to show
// that what such a client sends once its access ended is never run.
import { connect } from "node:net";

export interface RawTrpcSocket {
  /** Sends one text frame (masked, as a client must). */
  send(text: string): void;
  /** The close code the server sent, once it did (undefined before). */
  closeCode(): number | undefined;
  destroy(): void;
}

/** Opens /api/trpc (or `path`) on `url` with `cookie` (and the server's own Origin, as a browser would send it). */
export async function openRawTrpcSocket(url: string, cookie: string, path = "/api/trpc"): Promise<RawTrpcSocket> {
  const u = new URL(url);
  const sock = connect({ host: u.hostname, port: Number(u.port), allowHalfOpen: true });
  sock.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    sock.once("connect", () => resolve());
    sock.once("error", reject);
  });
  sock.write(
    `GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
      `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nOrigin: ${url}\r\n` +
      `Cookie: ${cookie}\r\n\r\n`,
  );
  let buf = Buffer.alloc(0);
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      sock.off("data", onData);
      const head = buf.subarray(0, end).toString("latin1");
      buf = buf.subarray(end + 4);
      if (!head.startsWith("HTTP/1.1 101")) reject(new Error(`upgrade refused: ${head.split("\r\n")[0]}`));
      else resolve();
    };
    sock.on("data", onData);
  });
  let code: number | undefined;
  // Server frames are unmasked; only the close frame's code is of interest here.
  const scan = () => {
    while (buf.length >= 2) {
      const short = buf[1] & 0x7f;
      const at = short === 126 ? 4 : short === 127 ? 10 : 2;
      if (buf.length < at) return;
      const len = short === 126 ? buf.readUInt16BE(2) : short === 127 ? Number(buf.readBigUInt64BE(2)) : short;
      if (buf.length < at + len) return;
      if ((buf[0] & 0x0f) === 0x8 && len >= 2) code = buf.readUInt16BE(at);
      buf = buf.subarray(at + len);
    }
  };
  sock.on("data", (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    scan();
  });
  scan();
  return {
    send(text) {
      const payload = Buffer.from(text);
      const len = payload.length;
      // FIN + text; the mask bit with a zero key (the payload goes as it is).
      const head = len < 126 ? Buffer.from([0x81, 0x80 | len]) : Buffer.from([0x81, 0x80 | 126, len >> 8, len & 0xff]);
      if (len >= 65_536) throw new Error("frame too long for this helper");
      sock.write(Buffer.concat([head, Buffer.alloc(4), payload]));
    },
    closeCode: () => code,
    destroy: () => void sock.destroy(),
  };
}
