// Test-only writers of crafted archives: a .zip (stored or deflated entries, any attributes,
// headers that may lie about sizes) and a ustar .tar / .tar.gz with any entry type, so the tests
// build exactly the hostile archive they mean instead of relying on a tool that refuses to.
import { crc32, deflateRawSync, gzipSync } from "node:zlib";

export interface ZipItem {
  name: string;
  data?: Buffer | string;
  /** Unix st_mode with its type bits (0o100644 file, 0o120777 link, 0o040755 folder). */
  mode?: number;
  deflate?: boolean;
  /** Claim this uncompressed size in both headers instead of the real one. */
  claimSize?: number;
}

export function makeZip(items: ZipItem[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const item of items) {
    const name = Buffer.from(item.name, "utf8");
    const raw = Buffer.from(item.data ?? "");
    const body = item.deflate ? deflateRawSync(raw, { level: 9 }) : raw;
    const method = item.deflate ? 8 : 0;
    const crc = crc32(raw);
    const size = item.claimSize ?? raw.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, body);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    const mode = item.mode ?? (item.name.endsWith("/") ? 0o040755 : 0o100644);
    central.writeUInt32LE((mode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(items.length, 0xffff), 8);
  end.writeUInt16LE(Math.min(items.length, 0xffff), 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

export interface TarItem {
  name: string;
  data?: Buffer | string;
  mode?: number;
  /** ustar typeflag: "0" file, "1" hard link, "2" symlink, "3" device, "5" folder, "6" FIFO, "S" sparse, "x" PAX. */
  type?: string;
  link?: string;
}

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, "0") + "\0";
}

function header(item: TarItem, size: number): Buffer {
  const h = Buffer.alloc(512);
  h.write(item.name, 0, 100, "utf8");
  h.write(octal(item.mode ?? (item.type === "5" ? 0o755 : 0o644), 8), 100, "latin1");
  h.write(octal(0, 8), 108, "latin1");
  h.write(octal(0, 8), 116, "latin1");
  h.write(octal(size, 12), 124, "latin1");
  h.write(octal(1_700_000_000, 12), 136, "latin1");
  h.write("        ", 148, "latin1");
  h.write(item.type ?? "0", 156, "latin1");
  if (item.link) h.write(item.link, 157, 100, "utf8");
  h.write("ustar\u000000", 257, "latin1");
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + " ", 148, "latin1");
  return h;
}

/** Yields the tar's blocks, so a 100,000-entry archive never needs to sit in memory whole. */
export function* tarBlocks(items: Iterable<TarItem>): Generator<Buffer> {
  for (const item of items) {
    const data = Buffer.from(item.data ?? "");
    yield header(item, data.length);
    if (data.length) yield Buffer.concat([data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
  }
  yield Buffer.alloc(1024);
}

/** A PAX extended header's body (entry type "x"): `<length> <key>=<value>\n` records. */
export function paxRecords(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([k, v]) => {
      const body = ` ${k}=${v}\n`;
      let len = Buffer.byteLength(body) + 1;
      while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
      return `${len}${body}`;
    })
    .join("");
}

export const makeTar = (items: Iterable<TarItem>) => Buffer.concat([...tarBlocks(items)]);
export const makeTarGz = (items: Iterable<TarItem>) => gzipSync(makeTar(items));
