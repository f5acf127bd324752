// The authorization table: every tRPC procedure of appRouter (enumerated from the router itself)
// × every subject (owner, admin, member, member of another org, share-link viewer of the session
// and of another one, a revoked device, nobody), over HTTP and over the WebSocket (subscriptions
// over the WebSocket only: HTTP refuses them to everyone), against a real
// server with accounts on (both databases): each cell is what the procedure's row in
// server/api/routers/<router>.access.ts declares. A procedure without a row, a row without a
// procedure, or a procedure whose first step is not authorize() fails here.
// Then the doors that are not procedures: the /api/trpc upgrade, the terminal socket, the preview
// ticket (what lets a browser into a preview host) and the audit export, per subject.
import { beforeAll, describe, expect, it } from "vitest";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { get } from "node:http";
import WebSocket from "ws";
import { useAccountsServer } from "../testing/accounts";
import { testDatabases } from "../testing/db";
import { appRouter } from "./root";
import { startsWithAuthorization } from "./trpc";
import { cell, defaultInput, SUBJECTS, type AccessRow, type Outcome, type SubjectName } from "../auth/authorize-table";
import { callHttp, openTrpcSocket, type Answer, type Kind } from "../auth/authorize-testing";

type Procedure = { _def: { type: Kind; middlewares: unknown[] } };
const procedures = Object.entries((appRouter._def as unknown as { procedures: Record<string, Procedure> }).procedures);

/** Every <key>.access.ts beside the routers, by router key. */
async function loadRows(): Promise<Map<string, AccessRow>> {
  const rows = new Map<string, AccessRow>();
  const dir = join(import.meta.dirname, "routers");
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".access.ts"))) {
    const key = file.slice(0, -".access.ts".length);
    const mod = (await import(join(dir, file))) as { default: Record<string, AccessRow> };
    for (const [name, row] of Object.entries(mod.default)) rows.set(`${key}.${name}`, row);
  }
  return rows;
}

/** Whether an answer is the declared outcome (a refusal's NOT_FOUND says what is missing). */
function matches(expected: Outcome | "METHOD_NOT_SUPPORTED", a: Answer): boolean {
  // The fixture's sessions exist: "No session <id>." is a refusal. Any other NOT_FOUND of an
  // allowed call is the procedure's own answer (an unknown image id…).
  if (expected === "allow")
    return (
      a.ok ||
      (!["FORBIDDEN", "UNAUTHORIZED"].includes(a.code) &&
        !/^No session /.test(a.message) &&
        !a.message.startsWith("authorize"))
    );
  return !a.ok && a.code === expected;
}

const show = (a: Answer) => (a.ok ? "ok" : `${a.code}: ${a.message}`);

describe("every procedure declares its access", () => {
  it("has a row for each procedure, a procedure for each row, and starts with authorize()", async () => {
    const rows = await loadRows();
    const names = procedures.map(([p]) => p);
    expect(names.length).toBeGreaterThan(30);
    expect(
      names.filter((p) => !rows.has(p)),
      "procedures without an access row",
    ).toEqual([]);
    expect(
      [...rows.keys()].filter((p) => !names.includes(p)),
      "rows naming no procedure",
    ).toEqual([]);
    expect(
      procedures.filter(([, p]) => !startsWithAuthorization(p)).map(([n]) => n),
      "procedures not starting with authorize()",
    ).toEqual([]);
  });
});

describe.each(testDatabases())("the access table on %s", (provider) => {
  let rows: Map<string, AccessRow>;
  const logs: string[] = [];

  beforeAll(async () => {
    rows = await loadRows();
  });
  const server = useAccountsServer(provider, { name: "access", log: (line) => logs.push(line) });

  async function walk(transport: "http" | "ws", subject: SubjectName): Promise<string[]> {
    const wrong: string[] = [];
    const socket =
      transport === "ws"
        ? await openTrpcSocket(server.quiver.url, server.people.headers[subject], server.people.wsQuery[subject])
        : null;
    try {
      for (const [path, proc] of procedures) {
        const row = rows.get(path)!;
        // A subscription is the WebSocket's only: over HTTP it is refused to everyone alike.
        const expected =
          transport === "http" && proc._def.type === "subscription" ? "METHOD_NOT_SUPPORTED" : cell(row, subject);
        if (socket?.refused) {
          // Refused at the door: every call is refused the same way; a public one is HTTP's.
          const code = socket.refused === 401 ? "UNAUTHORIZED" : "FORBIDDEN";
          if (expected !== "allow" && expected !== code)
            wrong.push(`${path}: expected ${expected}, the upgrade was refused with ${socket.refused}`);
          continue;
        }
        const input = row.input ? await row.input(server.people.fixture) : defaultInput(server.people.fixture);
        const answer = socket
          ? await socket.call(proc._def.type, path, input)
          : await callHttp(server.quiver.url, server.people.headers[subject], proc._def.type, path, input);
        if (!matches(expected, answer)) wrong.push(`${path}: expected ${expected}, got ${show(answer)}`);
      }
    } finally {
      socket?.close();
    }
    return wrong;
  }

  it.each(SUBJECTS.map((s) => [s]))(
    "%s gets what every row declares, over HTTP",
    async (subject) => {
      expect(await walk("http", subject)).toEqual([]);
    },
    120_000,
  );

  it.each(SUBJECTS.map((s) => [s]))(
    "%s gets what every row declares, over the WebSocket",
    async (subject) => {
      expect(await walk("ws", subject)).toEqual([]);
    },
    120_000,
  );

  /** The status a door answers a subject's request with. */
  async function door(subject: SubjectName, kind: "ws" | "http" | "post", path: string): Promise<number> {
    const headers = server.people.headers[subject];
    if (kind === "post")
      return (
        await fetch(`${server.quiver.url}${path}`, {
          method: "POST",
          headers: { ...headers, origin: server.quiver.url },
        })
      ).status;
    if (kind === "http")
      return new Promise<number>((resolve, reject) =>
        get(`${server.quiver.url}${path}`, { headers }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on(
          "error",
          reject,
        ),
      );
    return new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${server.quiver.url.replace("http", "ws")}${path}`, {
        headers: { ...headers, origin: server.quiver.url },
      });
      ws.once("open", () => (ws.close(), resolve(101)));
      ws.once("unexpected-response", (_req, res) => (res.resume(), resolve(res.statusCode ?? 0)));
      ws.once("error", reject);
    });
  }

  const DOORS: Record<string, Record<SubjectName, number[]>> = {
    // The socket itself: signed-in people and live viewers; each call is then decided as above.
    "/api/trpc upgrade": {
      owner: [101],
      admin: [101],
      member: [101],
      otherOrg: [101],
      viewer: [101],
      otherViewer: [101],
      revoked: [401],
      anonymous: [401],
    },
    // A terminal of the session: its creator only (with no runner here the socket opens and says so).
    terminal: {
      owner: [101],
      admin: [403],
      member: [403],
      otherOrg: [403, 404],
      viewer: [403],
      otherViewer: [403],
      revoked: [401],
      anonymous: [401],
    },
    // A ticket into the session's preview host (how a browser gets in): its creator only.
    "preview ticket": {
      owner: [200],
      admin: [403],
      member: [403],
      otherOrg: [403],
      viewer: [403],
      otherViewer: [403],
      revoked: [403],
      anonymous: [403],
    },
    // The audit export: the org's owners and admins (otherOrg exports its own org's).
    "audit export": {
      owner: [200],
      admin: [200],
      member: [403],
      otherOrg: [200],
      viewer: [403],
      otherViewer: [403],
      revoked: [401],
      anonymous: [401],
    },
  };

  it.each(SUBJECTS.map((s) => [s]))(
    "%s gets what each socket and door declares",
    async (subject) => {
      const { sessionId } = server.people.fixture;
      const query = server.people.wsQuery[subject] ? "&shared=1" : "";
      const got = {
        "/api/trpc upgrade": await door(subject, "ws", `/api/trpc${server.people.wsQuery[subject]}`),
        terminal: await door(subject, "ws", `/terminal?session=${sessionId}&term=t1&cols=80&rows=24${query}`),
        "preview ticket": await door(subject, "post", `/api/preview/ticket?session=${sessionId}&port=5173`),
        "audit export": await door(subject, "http", `/api/audit/export${server.people.wsQuery[subject]}`),
      };
      const wrong = Object.entries(DOORS)
        .filter(([name, cells]) => !cells[subject].includes(got[name as keyof typeof got]))
        .map(([name, cells]) => `${name}: expected ${cells[subject].join("/")}, got ${got[name as keyof typeof got]}`);
      expect(wrong, logs.slice(-5).join("\n")).toEqual([]);
    },
    60_000,
  );
});
