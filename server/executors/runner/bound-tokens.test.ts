// QUIVER_RUNNER_TOKENS and QUIVER_RUNNER_TOKENS_FILE as parseEnv reads them at boot: a bad pair
// stops the start with a line naming the variable and the entry (never the secret), a file
// other users may read is refused, and ids that could pass for one another are caught.
import { afterEach, describe, expect, it } from "vitest";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "../../env";
import { looksAlike } from "./bound-tokens";

const A = "token-of-gpu-one-0123456789";
const B = "token-of-gpu-two-0123456789";
const SHARED = "shared-runner-token-0123456789";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tokensFile(text: string, mode = 0o600): string {
  const dir = mkdtempSync(join(tmpdir(), "quiver-runner-tokens-"));
  dirs.push(dir);
  const path = join(dir, "runners");
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

/** parseEnv's error for `vars`, which must be refused. */
function refusal(vars: Record<string, string>): string {
  try {
    parseEnv(vars);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("parseEnv accepted the environment");
}

describe("QUIVER_RUNNER_TOKENS", () => {
  it("binds each runner id to its token, trimmed, with blank entries skipped", () => {
    const env = parseEnv({ QUIVER_RUNNER_TOKENS: ` gpu-1=${A} ,, gpu-2 = ${B},`, QUIVER_RUNNER_TOKEN: SHARED });
    expect(env.runnerBindings.map(({ runnerId, token }) => ({ runnerId, token }))).toEqual([
      { runnerId: "gpu-1", token: A },
      { runnerId: "gpu-2", token: B },
    ]);
    expect(parseEnv({}).runnerBindings).toEqual([]);
  });

  it("takes a token with '=' in it (base64 padding): the id ends at the first one", () => {
    const env = parseEnv({ QUIVER_RUNNER_TOKENS: `gpu-1=${A}==` });
    expect(env.runnerBindings[0]).toMatchObject({ runnerId: "gpu-1", token: `${A}==` });
  });

  it("names a malformed pair by its position, without repeating it", () => {
    const message = refusal({ QUIVER_RUNNER_TOKENS: `gpu-1=${A},${B}` });
    expect(message).toBe("Invalid QUIVER_RUNNER_TOKENS: entry 2: must be <runner id>=<token>");
    expect(refusal({ QUIVER_RUNNER_TOKENS: `=${A}` })).toMatch(/entry 1: the runner id before "=" is empty/);
  });

  it("refuses a short token, or one no Authorization header could carry", () => {
    const message = refusal({ QUIVER_RUNNER_TOKENS: `gpu-1=${A},gpu-2=short-secret` });
    expect(message).toBe("Invalid QUIVER_RUNNER_TOKENS: entry 2: the token must be at least 16 characters");
    expect(message).not.toContain("short-secret");
    expect(refusal({ QUIVER_RUNNER_TOKENS: "gpu-1=päss-wörd-0123456789" })).toMatch(/printable ASCII/);
  });

  it("refuses an id the runner's hello would refuse", () => {
    expect(refusal({ QUIVER_RUNNER_TOKENS: `gpu\u00071=${A}` })).toMatch(/entry 1: the runner id must be one line/);
    expect(refusal({ QUIVER_RUNNER_TOKENS: `${"x".repeat(201)}=${A}` })).toMatch(/entry 1: the runner id/);
  });

  it("refuses an id bound twice, or bound twice under ids that look alike", () => {
    expect(refusal({ QUIVER_RUNNER_TOKENS: `gpu-1=${A},gpu-1=${B}` })).toBe(
      'Invalid QUIVER_RUNNER_TOKENS: entry 1 and entry 2 both bind runner "gpu-1"',
    );
    expect(refusal({ QUIVER_RUNNER_TOKENS: `gpu-1=${A},GPU-l=${B}` })).toMatch(
      /entry 1 and entry 2 bind runner ids that look alike/,
    );
  });

  it("refuses a token given twice, or the shared token as a bound one", () => {
    const twice = refusal({ QUIVER_RUNNER_TOKENS: `gpu-1=${A},gpu-2=${A}` });
    expect(twice).toBe("Invalid QUIVER_RUNNER_TOKENS: entry 1 and entry 2 have the same token");
    const shared = refusal({ QUIVER_RUNNER_TOKENS: `gpu-1=${SHARED}`, QUIVER_RUNNER_TOKEN: SHARED });
    expect(shared).toMatch(/^Invalid QUIVER_RUNNER_TOKENS: entry 1: the token is QUIVER_RUNNER_TOKEN's/);
    for (const m of [twice, shared]) expect(m).not.toMatch(/token-of|shared-runner/);
  });

  it("never repeats a token variable's value in its error", () => {
    expect(refusal({ QUIVER_RUNNER_TOKEN: "short-secret" })).toBe(
      "Invalid QUIVER_RUNNER_TOKEN: must be at least 16 characters",
    );
    // A mail URL holds its password: it is named, not repeated.
    expect(refusal({ QUIVER_SMTP_URL: "ftp://user:hunter2@mail" })).not.toContain("hunter2");
  });
});

describe("QUIVER_RUNNER_TOKENS_FILE", () => {
  it("reads one pair a line, with blank lines and # comments", () => {
    const path = tokensFile(`# GPU boxes\n\ngpu-1=${A}\r\n  # retired: gpu-0\ngpu-2=${B}\n`);
    const env = parseEnv({ QUIVER_RUNNER_TOKENS_FILE: path });
    expect(env.runnerBindings.map((b) => [b.runnerId, b.token])).toEqual([
      ["gpu-1", A],
      ["gpu-2", B],
    ]);
  });

  it("refuses a file other users may read or write, as ssh does a private key", () => {
    for (const mode of [0o644, 0o640, 0o620]) {
      const path = tokensFile(`gpu-1=${A}\n`, mode);
      const message = refusal({ QUIVER_RUNNER_TOKENS_FILE: path });
      expect(message).toContain(`Invalid QUIVER_RUNNER_TOKENS_FILE: ${path} is open to other users (mode 0`);
      expect(message).toContain(`chmod 600 ${path}`);
      expect(message).not.toContain(A);
    }
    expect(refusal({ QUIVER_RUNNER_TOKENS_FILE: "/nonexistent/runners" })).toBe(
      "Invalid QUIVER_RUNNER_TOKENS_FILE: cannot read /nonexistent/runners: ENOENT",
    );
  });

  it("names the file and line of a bad pair", () => {
    const path = tokensFile(`gpu-1=${A}\n# ok\ngpu-2 ${B}\n`);
    expect(refusal({ QUIVER_RUNNER_TOKENS_FILE: path })).toBe(
      `Invalid QUIVER_RUNNER_TOKENS_FILE: ${path} line 3: must be <runner id>=<token>`,
    );
  });

  it("is checked against QUIVER_RUNNER_TOKENS: one id or token across both is refused", () => {
    const path = tokensFile(`gpu-1=${B}\n`);
    expect(refusal({ QUIVER_RUNNER_TOKENS: `gpu-1=${A}`, QUIVER_RUNNER_TOKENS_FILE: path })).toBe(
      `Invalid QUIVER_RUNNER_TOKENS_FILE: entry 1 and ${path} line 1 both bind runner "gpu-1"`,
    );
    const both = parseEnv({ QUIVER_RUNNER_TOKENS: `gpu-2=${A}`, QUIVER_RUNNER_TOKENS_FILE: path });
    expect(both.runnerBindings.map((b) => b.runnerId)).toEqual(["gpu-2", "gpu-1"]);
  });
});

describe("ids that look alike", () => {
  it("are the same id in another case, width, spacing, accent, or script", () => {
    for (const claim of [
      "GPU-1",
      "gpu-1 ",
      " gpu-1",
      "gpu-1\u200b",
      "g\u200dpu-1",
      "ｇｐｕ-１",
      "gpu\u20101",
      "g\u0440u-1", // Cyrillic er
      "gpú-1",
      "gpu-l",
      "gpu-i",
    ])
      expect(looksAlike("gpu-1", claim), JSON.stringify(claim)).toBe(true);
  });

  it("are not ids that differ in a letter anyone would see", () => {
    for (const other of ["gpu-2", "gpu-1a", "gpu1", "cpu-1", "gpu_1", ""])
      expect(looksAlike("gpu-1", other), JSON.stringify(other)).toBe(false);
  });
});
