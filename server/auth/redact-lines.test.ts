// Text a viewer gets in lines is redacted as the whole it was cut from: a private key's body
// lines, which no line alone shows to be secret, never reach a viewer's search results or diff
// hunks; lines with no secret stay as they are. End to end, a share-link viewer's files.search
// through a real runner finds the key's lines redacted, while the session's creator sees them.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDACTED } from "./redact";
import { redactHunkLines, redactLines, redactSearch } from "./redact-lines";
import { spawnRunner, startServer, waitFor, type RunnerChild, type TestServer } from "../testing/runner";
import { createFileService } from "../services/files";
import { createSessionService } from "../services/sessions";
import { useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import { appRouter } from "../api/root";
import { contextFor } from "../api/context";
import type { Services } from "../services/types";

const body1 = "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu";
const body2 = "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG9mcmVkcGx1Z2g=";
const keyLines = ["-----BEGIN RSA PRIVATE KEY-----", body1, body2, "-----END RSA PRIVATE KEY-----"];
const file = ["# deploy key", ...keyLines, "port = 8080", "TOKEN=abc123 # same line"].join("\n");

describe("redactLines", () => {
  it("cuts a secret spanning lines out of every line it covers, and leaves the others", () => {
    const out = redactLines(file.split("\n"));
    expect(out).toHaveLength(7);
    expect(out.join("\n")).not.toContain(body1);
    expect(out.join("\n")).not.toContain(body2);
    expect(out[0]).toBe("# deploy key");
    expect(out[2]).toBe(REDACTED);
    expect(out[3]).toBe(REDACTED);
    expect(out[5]).toBe("port = 8080");
    expect(out[6]).toBe(`TOKEN=${REDACTED}`);
  });

  it("redacts each side of a hunk whole: an added key's body, a removed one's, context kept", () => {
    const added = redactHunkLines([" # deploy key", ...keyLines.map((l) => `+${l}`), " port = 8080"]);
    expect(added.join("\n")).not.toMatch(new RegExp(`${body1.slice(0, 20)}|${body2.slice(0, 20)}`));
    expect(added[0]).toBe(" # deploy key");
    expect(added[2]).toBe(`+${REDACTED}`);
    expect(added.at(-1)).toBe(" port = 8080");
    const removed = redactHunkLines(["-" + keyLines[0], "-" + body1, " " + body2, "-" + keyLines[3]]);
    expect(removed.join("\n")).not.toContain(body1);
    expect(removed.join("\n")).not.toContain(body2); // a context line inside the old side's key
    expect(redactHunkLines([" a", "-b", "+c", "\\ No newline at end of file"])).toEqual([
      " a",
      "-b",
      "+c",
      "\\ No newline at end of file",
    ]);
  });

  it("a search's matches show their lines redacted against the whole file; an unreadable file is left out", async () => {
    const found = {
      files: [
        { path: "id_rsa", matches: [2, 3].map((line) => ({ line, text: keyLines[line - 1] })) },
        { path: "gone.txt", matches: [{ line: 1, text: "x" }] },
      ],
      matches: 3,
      truncated: false,
    };
    const read = async (path: string) => {
      if (path === "id_rsa") return { content: file };
      throw new Error("not found");
    };
    const out = await redactSearch(found, read);
    expect(out).toEqual({
      files: [{ path: "id_rsa", matches: [2, 3].map((line) => ({ line, text: REDACTED })) }],
      matches: 2,
      truncated: true,
    });
  });
});

describe("a share-link viewer's files.search through a real runner", () => {
  const t = useTestDb("sqlite");
  let server: TestServer;
  let runner: RunnerChild;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "quiver-redact-lines-"));
    await writeFile(join(dir, "id_rsa"), `${file}\n`);
    server = await startServer();
    runner = spawnRunner({ url: server.url, workspace: dir });
    await waitFor(() => server.pool.status().some((r) => r.connected), 30_000, "runner");
  }, 60_000);
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("finds a key's body lines redacted for the viewer, as stored for the creator", async () => {
    const db = t.current.db;
    const { sessionId, userId, orgId } = await seedSession(db);
    const services = {
      db,
      dbProvider: "sqlite",
      sessions: createSessionService(db),
      files: createFileService(server.pool),
    } as unknown as Services;
    const query = { sessionId, query: "^[A-Za-z0-9+/=]{40,}$", regex: true };
    const viewer = appRouter.createCaller(
      contextFor(services, { kind: "viewer", sessionId, linkId: "sl0", expiresAt: null }),
    );
    const seen = await viewer.files.search(query);
    expect(seen.files, JSON.stringify(seen)).toEqual([
      { path: "id_rsa", matches: [3, 4].map((line) => ({ line, text: REDACTED })) },
    ]);
    expect(JSON.stringify(seen)).not.toContain(body1.slice(0, 16));
    const owner = appRouter.createCaller(
      contextFor(services, { kind: "owner", actor: { userId, orgId, role: "owner" }, via: "loopback" }),
    );
    expect(JSON.stringify(await owner.files.search(query))).toContain(body1);
  }, 60_000);
});
