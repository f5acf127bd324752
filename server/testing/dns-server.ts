// Test harness (tests only): a DNS server on a local UDP port that answers TXT questions from a
// table the test fills, in DNS's real wire format (RFC 1035), so the server's own resolver is
// pointed at it (QUIVER_SSO_DNS_SERVERS) exactly as at a real one. A name with no records is
// NXDOMAIN; any other question type gets an empty answer.
import { createSocket, type Socket } from "node:dgram";

export interface TestDns {
  /** `127.0.0.1:<port>`, as QUIVER_SSO_DNS_SERVERS takes it. */
  server: string;
  /** TXT strings per name (lower case, no trailing dot); change it at any time. */
  records: Map<string, string[]>;
  /** Every name asked, in order. */
  asked: string[];
  close(): Promise<void>;
}

const TXT = 16;

/** The question's name (lower case) and where the question section ends, or undefined if malformed. */
function readQuestion(query: Buffer): { name: string; end: number; type: number } | undefined {
  const labels: string[] = [];
  let at = 12;
  while (at < query.length) {
    const len = query[at];
    if (len === 0) break;
    if (len > 63 || at + 1 + len > query.length) return undefined;
    labels.push(query.subarray(at + 1, at + 1 + len).toString("latin1"));
    at += 1 + len;
  }
  if (at + 5 > query.length) return undefined;
  return { name: labels.join(".").toLowerCase(), end: at + 5, type: query.readUInt16BE(at + 1) };
}

function answer(query: Buffer, records: Map<string, string[]>): Buffer | undefined {
  if (query.length < 12) return undefined;
  const q = readQuestion(query);
  if (!q) return undefined;
  const values = records.get(q.name);
  const answers = q.type === TXT ? (values ?? []) : [];
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  // QR, the question's RD, RA; NXDOMAIN when the name has nothing at all.
  header.writeUInt16BE(0x8000 | (query.readUInt16BE(2) & 0x0100) | 0x0080 | (values ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  const rrs = answers.map((text) => {
    const bytes = Buffer.from(text, "utf8");
    const chunks: Buffer[] = [];
    for (let i = 0; i === 0 || i < bytes.length; i += 255) {
      const part = bytes.subarray(i, i + 255);
      chunks.push(Buffer.from([part.length]), part);
    }
    const rdata = Buffer.concat(chunks);
    const fixed = Buffer.alloc(12);
    fixed.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    fixed.writeUInt16BE(TXT, 2);
    fixed.writeUInt16BE(1, 4); // IN
    fixed.writeUInt32BE(60, 6);
    fixed.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([fixed, rdata]);
  });
  return Buffer.concat([header, query.subarray(12, q.end), ...rrs]);
}

export async function startTestDns(port = 0): Promise<TestDns> {
  const records = new Map<string, string[]>();
  const asked: string[] = [];
  const socket: Socket = createSocket("udp4");
  socket.on("message", (msg, from) => {
    const name = readQuestion(msg)?.name;
    if (name !== undefined) asked.push(name);
    const reply = answer(msg, records);
    if (reply) socket.send(reply, from.port, from.address);
  });
  await new Promise<void>((resolve) => socket.bind(port, "127.0.0.1", resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    records,
    asked,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
