// Reads a tar, plain or gzipped, with node-tar's Parser into an EntrySink. Decompression is ours
// (zlib), so every inflated byte is counted whatever the gzip or tar headers say, and the Parser
// is told to detect no compression of its own: a gzip inside the gzip is refused, not inflated
// unmetered. Sparse files are reported as such (see the "meta" listener) so that they are refused,
// not skipped or written condensed.
import { createReadStream } from "node:fs";
import { Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { Parser, type ReadEntry } from "tar";
import { ArchiveError, type ArchiveEntry, type EntrySink } from "./archive-limits";

const kinds: Record<string, ArchiveEntry["kind"]> = {
  File: "file",
  OldFile: "file",
  ContiguousFile: "file",
  Directory: "dir",
  GNUDumpDir: "dir",
  SymbolicLink: "symlink",
  Link: "hardlink",
  CharacterDevice: "device",
  BlockDevice: "device",
  FIFO: "fifo",
};

/** Counts the bytes gunzip gives (tar headers and padding included) and stops past `max`. */
class Meter extends Transform {
  bytes = 0;
  private first = true;
  constructor(private readonly max: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.first && chunk.length >= 2) {
      this.first = false;
      if (chunk[0] === 0x1f && chunk[1] === 0x8b)
        return cb(new ArchiveError("the archive is compressed twice (a gzip inside the gzip); refused"));
    }
    if (this.bytes > this.max)
      return cb(
        new ArchiveError(`the archive's tar stream inflates past ${this.max} bytes; refused as a decompression bomb`),
      );
    cb(null, chunk);
  }
}

/** `gzipped`: the file starts with gzip's magic bytes. `maxStreamBytes` bounds what gunzip may give. */
export async function readTar(path: string, gzipped: boolean, sink: EntrySink, maxStreamBytes: number): Promise<void> {
  let failure: unknown;
  const parser = new Parser({ strict: true, brotli: false, zstd: false } as ConstructorParameters<typeof Parser>[0]);
  const fail = (err: unknown) => {
    failure ??= err;
    parser.abort(err instanceof Error ? err : new Error(String(err)));
  };
  // node-tar keeps only the PAX keys it knows, so GNU's PAX sparse formats (0.0, 0.1, 1.0) are
  // seen here, in the header's raw text, which comes just before the entry it describes.
  let sparse: { name?: string } | undefined;
  parser.on("meta", (text: string) => {
    for (const m of text.matchAll(/^\d+ GNU\.sparse\.([a-z]+)=(.*)$/gm)) {
      sparse ??= {};
      if (m[1] === "name") sparse.name = m[2];
    }
  });
  // A type 'S' entry (GNU's own sparse format) is not given as an entry but skipped.
  parser.on("ignoredEntry", (e: ReadEntry) => {
    if (e.type === "SparseFile" || sparse) onEntry(e);
  });
  parser.on("entry", (e: ReadEntry) => onEntry(e));
  function onEntry(e: ReadEntry): void {
    const sparseName = sparse || e.type === "SparseFile" ? (sparse?.name ?? e.path) : undefined;
    sparse = undefined;
    if (failure) return void e.resume();
    const described: ArchiveEntry = {
      name: sparseName ?? e.path,
      kind: sparseName !== undefined ? "sparse" : (kinds[e.type] ?? "other"),
      mode: e.mode,
      declaredSize: e.size,
      linkTarget: e.linkpath,
    };
    let consumer: ReturnType<EntrySink["begin"]>;
    try {
      consumer = sink.begin(described);
    } catch (err) {
      fail(err);
      return void e.resume();
    }
    if (!consumer) return void e.resume();
    e.on("data", (chunk: Buffer) => {
      if (failure) return;
      try {
        consumer.data(chunk);
      } catch (err) {
        fail(err);
      }
    });
    e.on("end", () => {
      if (failure) return;
      try {
        consumer.end();
      } catch (err) {
        fail(err);
      }
    });
  }
  const meter = new Meter(maxStreamBytes);
  const stages = gzipped ? [createReadStream(path), createGunzip(), meter] : [createReadStream(path), meter];
  try {
    await pipeline([...stages, parser] as unknown as Parameters<typeof pipeline>[0][]);
  } catch (err) {
    failure ??= err;
  }
  if (failure instanceof ArchiveError) throw failure;
  if (failure) throw new ArchiveError(`not a readable tar archive: ${(failure as Error).message}`);
}
