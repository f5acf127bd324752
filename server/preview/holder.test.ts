// A preview host's cookie is its person's, with accounts on: a whole server (no web app, no
// runner: a request the cookie admits is forwarded and answered 502 "runner not connected",
// one it does not is refused 401). The member's own session's cookie works; once their role
// changes, they are removed from the org, or their device is signed out, it stops working (within
// the few seconds its check is kept), and a new ticket is refused too.
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { useAccountsServer } from "../testing/accounts";

/** The status of a request to `host` on the server's port, and the cookie it sets. */
const statusOn = (port: number, host: string, path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; cookie?: string }>((resolve, reject) =>
    request({ host: "127.0.0.1", port, path, headers: { host, ...headers } }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, cookie: res.headers["set-cookie"]?.[0]?.split(";")[0] });
    })
      .on("error", reject)
      .end(),
  );

describe("a preview cookie with accounts on", () => {
  const server = useAccountsServer("sqlite", { name: "preview-holder" });

  const status = (host: string, path: string, headers: Record<string, string> = {}) =>
    statusOn(server.quiver.port, host, path, headers);

  async function previewCookie(who: Record<string, string>, sessionId: string) {
    const ticket = await fetch(`${server.quiver.url}/api/preview/ticket?session=${sessionId}&port=5173`, {
      method: "POST",
      headers: { ...who, origin: server.quiver.url },
    });
    if (ticket.status !== 200) return { ticketStatus: ticket.status };
    const { ticket: value } = (await ticket.json()) as { ticket: string };
    const host = `5173-${sessionId}.localhost:${server.quiver.port}`;
    const redeemed = await status(host, `/?__quiver_ticket=${encodeURIComponent(value)}`);
    expect(redeemed.status).toBe(303);
    return { ticketStatus: 200, host, cookie: redeemed.cookie! };
  }

  const trpc = async (who: Record<string, string>, path: string, input: unknown) => {
    const res = await fetch(`${server.quiver.url}/api/trpc/${path}`, {
      method: "POST",
      headers: { ...who, "content-type": "application/json", origin: server.quiver.url },
      body: JSON.stringify(input),
    });
    return ((await res.json()) as { result?: { data: { id: string } } }).result?.data;
  };

  it("stops working when its person's role changes, they are removed, or their device is signed out", async () => {
    const { headers, fixture } = server.people;
    const member = headers.member;
    const sessionId = (await trpc(member, "sessions.create", { title: "member's" }))!.id;
    const got = await previewCookie(member, sessionId);
    const { host, cookie } = got as { host: string; cookie: string };
    expect((await status(host, "/", { cookie })).status).toBe(502); // admitted, forwarded: no runner
    expect((await status(host, "/")).status).toBe(401);

    // Another role: the device is still signed in, but not as what the cookie was given for.
    const membership = await server.db.db.membership.findFirstOrThrow({
      where: { userId: fixture.users.member, orgId: fixture.orgId },
    });
    await server.db.db.membership.update({ where: { id: membership.id }, data: { role: "admin" } });
    await expect.poll(async () => (await status(host, "/", { cookie })).status, { timeout: 10_000 }).toBe(401);
    await server.db.db.membership.update({ where: { id: membership.id }, data: { role: "member" } });
    await expect.poll(async () => (await status(host, "/", { cookie })).status, { timeout: 10_000 }).toBe(502);

    // Signed out everywhere: the cookie goes with the device.
    await server.db.db.authSession.deleteMany({ where: { userId: fixture.users.member } });
    await expect.poll(async () => (await status(host, "/", { cookie })).status, { timeout: 10_000 }).toBe(401);
    expect((await previewCookie(member, sessionId)).ticketStatus).not.toBe(200);
  }, 60_000);

  it("stops working when its person is removed from the org", async () => {
    const { headers, fixture } = server.people;
    const sessionId = (await trpc(headers.admin, "sessions.create", { title: "admin's" }))!.id;
    const { host, cookie } = (await previewCookie(headers.admin, sessionId)) as { host: string; cookie: string };
    expect((await status(host, "/", { cookie })).status).toBe(502);
    await server.db.db.membership.deleteMany({ where: { userId: fixture.users.admin, orgId: fixture.orgId } });
    await expect.poll(async () => (await status(host, "/", { cookie })).status, { timeout: 10_000 }).toBe(401);
  }, 60_000);
});

// A cookie the machine's owner got with accounts off (from loopback) names nobody: once the first
// account makes accounts on, it must stop working, as loopback itself stops counting.
describe("a preview cookie made with accounts off", () => {
  const server = useAccountsServer("sqlite", {
    name: "preview-holderless",
    people: false,
    env: () => ({ QUIVER_AUTH: undefined as unknown as string }),
  });

  const status = (host: string, path: string, headers: Record<string, string> = {}) =>
    statusOn(server.quiver.port, host, path, headers);

  it("stops working once accounts are on", async () => {
    const db = server.db.db;
    const session = await db.session.findFirst({ select: { id: true } });
    const sessionId =
      session?.id ??
      (
        (await (
          await fetch(`${server.quiver.url}/api/trpc/sessions.create`, {
            method: "POST",
            headers: { "content-type": "application/json", origin: server.quiver.url },
            body: JSON.stringify({ title: "owner's" }),
          })
        ).json()) as { result: { data: { id: string } } }
      ).result.data.id;
    const ticket = await fetch(`${server.quiver.url}/api/preview/ticket?session=${sessionId}&port=5173`, {
      method: "POST",
      headers: { origin: server.quiver.url },
    });
    expect(ticket.status).toBe(200);
    const { ticket: value } = (await ticket.json()) as { ticket: string };
    const host = `5173-${sessionId}.localhost:${server.quiver.port}`;
    const redeemed = await status(host, `/?__quiver_ticket=${encodeURIComponent(value)}`);
    expect(redeemed.status).toBe(303);
    const cookie = redeemed.cookie!;
    expect((await status(host, "/", { cookie })).status).toBe(502); // admitted, forwarded: no runner

    const user = await db.user.create({ data: { name: "First Owner", email: "owner@example.test" } });
    await db.authAccount.create({ data: { accountId: user.id, providerId: "credential", userId: user.id } });
    await expect.poll(async () => (await status(host, "/", { cookie })).status, { timeout: 10_000 }).toBe(401);
  }, 60_000);
});
