// The data folder's keys (cookie key, git credentials' key) on a real full disk (a small tmpfs):
// a first start that cannot write its key used to leave an empty key file, and every start after
// the disk had room again refused it as "damaged" until someone deleted it by hand. Now nothing
// is left, the next start makes the key, an empty file an earlier version left is replaced, and
// a key file with anything else wrong in it is still refused, never replaced.
import { readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCredentialKey } from "../services/git-credentials";
import { mountTmpfs, tmpfsRefusal } from "../testing/tmpfs";
import { loadSecret } from "./crypto";

const refusal = tmpfsRefusal();

describe.skipIf(refusal !== undefined).each([
  { file: "cookie-secret", load: loadSecret },
  { file: "git-credential-key", load: loadCredentialKey },
])("the data folder's $file", ({ file, load }) => {
  let disk: Exclude<ReturnType<typeof mountTmpfs>, string>;
  beforeAll(() => {
    const m = mountTmpfs("256k");
    if (typeof m === "string") throw new Error(m);
    disk = m;
  });
  afterAll(() => disk?.unmount());

  it("is made whole or not at all on a full disk, and made at the next start", () => {
    const fill = join(disk.dir, "fill");
    expect(() => writeFileSync(fill, Buffer.alloc(1024 * 1024, 1))).toThrow(/ENOSPC/);
    expect(() => load(disk.dir)).toThrow(/ENOSPC/);
    expect(readdirSync(disk.dir)).toEqual(["fill"]);

    rmSync(fill);
    const key = load(disk.dir);
    expect(key.length).toBe(32);
    expect(load(disk.dir).equals(key)).toBe(true);
    expect(statSync(join(disk.dir, file)).mode & 0o777).toBe(0o600);
    expect(readdirSync(disk.dir)).toEqual([file]);
    rmSync(join(disk.dir, file));
  });

  it("replaces an empty file a killed start left, and a killed start's temp; refuses a damaged key", () => {
    const path = join(disk.dir, file);
    writeFileSync(path, "");
    const temp = join(disk.dir, `.${file}.tmp-0123456789ab`);
    writeFileSync(temp, "half");
    utimesSync(temp, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    const key = load(disk.dir);
    expect(key.length).toBe(32);
    expect(readFileSync(path, "utf8").trim()).toBe(key.toString("base64url"));
    expect(readdirSync(disk.dir)).toEqual([file]);

    writeFileSync(path, "c2hvcnQ\n");
    expect(() => load(disk.dir)).toThrow(/is damaged/);
    expect(readFileSync(path, "utf8")).toBe("c2hvcnQ\n");
    rmSync(path);
  });
});
