// Reads a .zip with yauzl, entry by entry, into an EntrySink. yauzl's own name checks and size
// checks are off (decodeStrings, validateEntrySizes): the sink applies ours, with our messages,
// to the raw names and to the bytes actually inflated, whatever the headers say.
import yauzl from "yauzl";
import { ArchiveError, type ArchiveEntry, type EntrySink } from "./archive-limits";

const S_IFMT = 0o170000;
const types: Record<number, ArchiveEntry["kind"]> = {
  0o100000: "file",
  0o040000: "dir",
  0o120000: "symlink",
  0o020000: "device",
  0o060000: "device",
  0o010000: "fifo",
  0o140000: "other",
};

/** A raw name: UTF-8 when flagged or valid, else Latin-1 (close enough to CP437 to be refused or shown). */
function decodeName(raw: Buffer, flags: number): string {
  if (flags & 0x800) return raw.toString("utf8");
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(raw);
  } catch {
    return raw.toString("latin1");
  }
}

function describe(e: yauzl.Entry): ArchiveEntry {
  const name = decodeName(e.fileName as unknown as Buffer, e.generalPurposeBitFlag);
  const unix = e.versionMadeBy >> 8 === 3;
  const attrs = e.externalFileAttributes >>> 16;
  let kind: ArchiveEntry["kind"] = name.endsWith("/") ? "dir" : "file";
  if (unix && attrs & S_IFMT) kind = types[attrs & S_IFMT] ?? "other";
  // MS-DOS attribute 0x10: a folder made on Windows.
  if (!unix && e.externalFileAttributes & 0x10) kind = "dir";
  return { name, kind, mode: unix && attrs & 0o777 ? attrs & 0o7777 : undefined, declaredSize: e.uncompressedSize };
}

export async function readZip(path: string, sink: EntrySink, maxEntries: number): Promise<void> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(
      path,
      { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: false },
      (err, z) =>
        err || !z
          ? reject(new ArchiveError(`not a readable .zip archive: ${err?.message ?? "unknown error"}`))
          : resolve(z),
    ),
  );
  try {
    // The central directory's count is only a first look (the sink counts too), but it refuses a
    // 100,000-entry archive before a single byte is written.
    if (zip.entryCount > maxEntries)
      throw new ArchiveError(
        `the archive has ${zip.entryCount.toLocaleString("en-US")} entries, more than the ceiling of ${maxEntries.toLocaleString("en-US")}`,
      );
    await new Promise<void>((resolve, reject) => {
      zip.on("error", (err: Error) =>
        reject(err instanceof ArchiveError ? err : new ArchiveError(`the .zip archive is damaged: ${err.message}`)),
      );
      zip.on("end", () => resolve());
      zip.on("entry", (e: yauzl.Entry) => {
        void entry(zip, e, sink).then(() => zip.readEntry(), reject);
      });
      zip.readEntry();
    });
  } finally {
    zip.close();
  }
}

async function entry(zip: yauzl.ZipFile, e: yauzl.Entry, sink: EntrySink): Promise<void> {
  const described = describe(e);
  if (e.isEncrypted())
    throw new ArchiveError(
      `entry ${JSON.stringify(described.name)} is encrypted; upload an archive without a password`,
    );
  const consumer = sink.begin(described);
  if (!consumer) return;
  if (!e.canDecodeFileData())
    throw new ArchiveError(
      `entry ${JSON.stringify(described.name)} uses compression method ${e.compressionMethod}, which is not supported (only stored and deflate)`,
    );
  const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
    zip.openReadStream(e, (err, s) =>
      err || !s
        ? reject(new ArchiveError(`entry ${JSON.stringify(described.name)} cannot be read: ${err?.message}`))
        : resolve(s),
    ),
  );
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) consumer.data(chunk);
  } catch (err) {
    (stream as unknown as { destroy?: () => void }).destroy?.();
    if (err instanceof ArchiveError) throw err;
    throw new ArchiveError(`entry ${JSON.stringify(described.name)} is damaged: ${(err as Error).message}`);
  }
  consumer.end();
}
