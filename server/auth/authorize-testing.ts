// The table test's world (server/api/access-table.test.ts): a real server with accounts on, the
// seven kinds of subject signed in for real (better-auth cookies, share-link viewer cookies), the
// fixture resources of server/auth/authorize-table.ts, and callers that reach a procedure over
// HTTP (GET/POST /api/trpc/<path>) or over the WebSocket (tRPC's JSON-RPC messages on one socket
// per subject), answering the error code and message, or ok.
import { randomBytes } from "node:crypto";
import WebSocket from "ws";
import type { Db } from "../db";
import { SHARE_VIEW_HEADER } from "../protocol/share-view";
import type { AccessFixture, SubjectName } from "./authorize-table";

export type Answer = { ok: true } | { ok: false; code: string; message: string };
export type Kind = "query" | "mutation" | "subscription";

const PASSWORD = "table test password 1";

export interface People {
  /** Headers each subject's HTTP requests carry; `view` marks the share view. */
  headers: Record<SubjectName, Record<string, string>>;
  /** Each subject's WebSocket URL suffix (the share view's mark). */
  wsQuery: Record<SubjectName, string>;
  fixture: AccessFixture;
}

const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");

/** Signs in every subject and makes the fixture. The server runs with QUIVER_AUTH=accounts and QUIVER_SIGNUP=open. */
export async function signInPeople(url: string, db: Db): Promise<People> {
  const post = async (path: string, body: object, cookie = "") => {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: url, ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res;
  };
  const tag = randomBytes(4).toString("hex");
  const first = await post("/api/auth/first-owner", {
    name: "Owner",
    email: `owner-${tag}@table.test`,
    password: PASSWORD,
  });
  const owner = cookiesOf(first);
  const signUp = async (who: string) =>
    cookiesOf(
      await post("/api/auth/sign-up/email", { name: who, email: `${who}-${tag}@table.test`, password: PASSWORD }),
    );
  const [admin, member, otherOrg] = [await signUp("admin"), await signUp("member"), await signUp("other")];
  const userOf = async (who: string) =>
    (await db.user.findUniqueOrThrow({ where: { email: `${who}-${tag}@table.test` } })).id;
  const ids = {
    owner: await userOf("owner"),
    admin: await userOf("admin"),
    member: await userOf("member"),
    otherOrg: await userOf("other"),
  };
  const orgId = (await db.membership.findFirstOrThrow({ where: { userId: ids.owner, role: "owner" } })).orgId;
  const otherOrgId = (await db.membership.findFirstOrThrow({ where: { userId: ids.otherOrg } })).orgId;
  // Admin and member join the owner's org and work in it (as an accepted invitation leaves them).
  for (const [userId, role] of [
    [ids.admin, "admin"],
    [ids.member, "member"],
  ] as const) {
    await db.membership.create({ data: { userId, orgId, role } });
    await db.authSession.updateMany({ where: { userId }, data: { activeOrganizationId: orgId } });
  }
  // A device of the member's, signed in and then revoked (its session row gone).
  const revoked = cookiesOf(
    await post("/api/auth/sign-in/email", { email: `member-${tag}@table.test`, password: PASSWORD }),
  );
  const newest = await db.authSession.findFirstOrThrow({
    where: { userId: ids.member },
    orderBy: { createdAt: "desc" },
  });
  await db.authSession.delete({ where: { id: newest.id } });

  const trpcPost = async (path: string, input: unknown) => {
    const res = await post(`/api/trpc/${path}`, input as object, owner);
    return ((await res.json()) as { result: { data: Record<string, unknown> } }).result.data;
  };
  const newSession = async () =>
    (await trpcPost("sessions.create", { title: `t-${randomBytes(3).toString("hex")}` })).id as string;
  const newShare = async (sessionId: string) =>
    (await trpcPost("shares.create", { sessionId })) as { id: string; token: string };
  const viewerCookie = async (token: string) => cookiesOf(await fetch(`${url}/share/${token}`, { redirect: "manual" }));
  const sessionId = await newSession();
  const otherSessionId = await newSession();
  const link = await newShare(sessionId);
  const otherLink = await newShare(otherSessionId);
  const newApproval = async (sid = sessionId) => {
    const call = await db.toolCall.create({
      data: {
        sessionId: sid,
        providerCallId: `c-${randomBytes(4).toString("hex")}`,
        name: "shell",
        input: { command: "true" },
        status: "awaiting_approval",
      },
    });
    return (
      await db.approval.create({
        data: {
          sessionId: sid,
          toolCallId: call.id,
          fingerprint: "f",
          exactFingerprint: "f",
          request: { command: "true" },
        },
      })
    ).id;
  };
  const fixture: AccessFixture = {
    db,
    orgId,
    otherOrgId,
    users: ids,
    sessionId,
    otherSessionId,
    linkId: link.id,
    approvalId: await newApproval(),
    newSession,
    newShareLink: async (sid = sessionId) => (await newShare(sid)).id,
    newApproval,
    unique: () => randomBytes(5).toString("hex"),
  };
  const view = { [SHARE_VIEW_HEADER]: "1" };
  return {
    fixture,
    headers: {
      owner: { cookie: owner },
      admin: { cookie: admin },
      member: { cookie: member },
      otherOrg: { cookie: otherOrg },
      viewer: { cookie: await viewerCookie(link.token), ...view },
      otherViewer: { cookie: await viewerCookie(otherLink.token), ...view },
      revoked: { cookie: revoked },
      anonymous: {},
    },
    wsQuery: {
      owner: "",
      admin: "",
      member: "",
      otherOrg: "",
      viewer: "?shared=1",
      otherViewer: "?shared=1",
      revoked: "",
      anonymous: "",
    },
  };
}

/** A tRPC error's code and message, from an HTTP or WebSocket answer. */
function errorOf(body: unknown): Answer {
  const e = (body as { error?: { message?: string; data?: { code?: string } } }).error;
  return e ? { ok: false, code: e.data?.code ?? "?", message: e.message ?? "" } : { ok: true };
}

/** One call over HTTP. A subscription is an event stream: its first event says ok or the error. */
export async function callHttp(
  url: string,
  headers: Record<string, string>,
  kind: Kind,
  path: string,
  input: unknown,
): Promise<Answer> {
  const q = input === undefined ? "" : `input=${encodeURIComponent(JSON.stringify(input))}`;
  const res =
    kind === "mutation"
      ? await fetch(`${url}/api/trpc/${path}`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json", origin: url },
          body: JSON.stringify(input ?? {}),
        })
      : await fetch(`${url}/api/trpc/${path}?${q}`, {
          headers: { ...headers, ...(kind === "subscription" ? { accept: "text/event-stream" } : {}) },
        });
  const text = (res.headers.get("content-type") ?? "").includes("text/event-stream")
    ? await firstEvent(res)
    : await res.text();
  try {
    return errorOf(JSON.parse(text));
  } catch {
    return { ok: false, code: `HTTP ${res.status}`, message: text.slice(0, 200) };
  }
}

/** The first event of an event stream that says how the subscription went, as JSON text (an
 *  error's shape, or {} once it streams); then closes it. The opening "connected" event and
 *  pings say nothing. */
async function firstEvent(res: Response): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  // Once connected, a refusal comes at once; a subscription that was let in may send nothing.
  let quietAfter = Infinity;
  const QUIET = Symbol("quiet");
  try {
    for (;;) {
      const wait =
        quietAfter === Infinity
          ? undefined
          : new Promise<typeof QUIET>((r) => setTimeout(() => r(QUIET), Math.max(0, quietAfter - Date.now())));
      const read = await (wait ? Promise.race([reader.read(), wait]) : reader.read());
      if (read === QUIET) return "{}";
      const { value, done } = read;
      if (done) return "{}";
      buf += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event === "serialized-error" && data) return JSON.stringify({ error: JSON.parse(data) });
        if (event === "message" && data !== undefined) return "{}";
        if (event === "return") return "{}";
        if (event === "connected") quietAfter = Date.now() + 1_500;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** A subject's tRPC WebSocket: calls one at a time; `refused` when the upgrade was answered with a status. */
export async function openTrpcSocket(url: string, headers: Record<string, string>, query: string) {
  const ws = new WebSocket(`${url.replace("http", "ws")}/api/trpc${query}`, { headers });
  const refused = await new Promise<number | null>((resolve, reject) => {
    ws.once("open", () => resolve(null));
    ws.once("unexpected-response", (_req, res) => (res.resume(), resolve(res.statusCode ?? 0)));
    ws.once("error", reject);
  });
  let next = 1;
  const waiting = new Map<number, (msg: unknown) => void>();
  ws.on("message", (raw) => {
    const msg = JSON.parse(raw.toString()) as { id?: number };
    if (typeof msg.id === "number") waiting.get(msg.id)?.(msg);
  });
  return {
    refused,
    async call(kind: Kind, path: string, input: unknown): Promise<Answer> {
      const id = next++;
      const answer = await new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer over the WebSocket to ${path}`)), 20_000);
        waiting.set(id, (msg) => (clearTimeout(timer), resolve(msg)));
        ws.send(JSON.stringify({ id, method: kind, params: { path, input } }));
      });
      waiting.delete(id);
      if (kind === "subscription") ws.send(JSON.stringify({ id, method: "subscription.stop" }));
      return errorOf(answer);
    },
    close: () => ws.close(),
  };
}
