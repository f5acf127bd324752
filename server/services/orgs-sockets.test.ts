// Org changes against the real server with accounts on (port 0, no runner, both databases), over
// real HTTP and WebSockets: the first owner invites a teammate, who signs up through the
// invitation and joins; demoting or removing the teammate closes their open WebSocket in that
// org at once (well before the 5 s re-check of signed-in sockets), while their socket opened in
// another org stays open; a switch makes the next request act in the other org.
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import type { AppRouter } from "../api/root";
import { useAccountsServer } from "../testing/accounts";
import { testDatabases } from "../testing/db";

describe.each(testDatabases())("org changes close sockets on %s", (provider) => {
  // Nobody signed in yet and no open sign-up: the first owner and the teammate are made here.
  const server = useAccountsServer(provider, { name: "orgs", people: false, startMs: 60_000 });

  const post = (path: string, body: object, cookie?: string) =>
    fetch(`${server.quiver.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
  const cookiesOf = (res: Response) =>
    res.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
  const client = (cookie: string) =>
    createTRPCClient<AppRouter>({
      links: [httpBatchLink({ url: `${server.quiver.url}/api/trpc`, headers: { cookie } })],
    });
  /** An open tRPC WebSocket of whoever holds `cookie`, and the close it gets. */
  async function openSocket(cookie: string) {
    const ws = new WebSocket(`${server.quiver.url.replace("http", "ws")}/api/trpc`, { headers: { cookie } });
    const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
      ws.once("close", (code, reason) => resolve({ code, reason: reason.toString(), at: Date.now() })),
    );
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    return { ws, closed, isOpen: () => ws.readyState === WebSocket.OPEN };
  }

  it("invites, joins, and ends the teammate's sockets in the org at once on demotion and removal", async () => {
    const first = await post("/api/auth/first-owner", {
      name: "Ada",
      email: "ada@example.com",
      password: "correct horse battery",
    });
    expect(first.status).toBe(200);
    const owner = client(cookiesOf(first));
    const team = await owner.orgs.mine.query();
    const teamOrgId = team.activeOrgId;
    expect(team.accounts).toBe(true);

    const invitation = await owner.orgs.invite.mutate({ email: "Bob@Example.com", role: "admin" });
    // Someone else cannot sign up with the email of nobody invited.
    expect(
      (
        await post("/api/auth/sign-up/email", {
          name: "Eve",
          email: "eve@example.com",
          password: "another good password",
        })
      ).status,
    ).toBe(403);
    // Nor with the invited email without the link's token, or with a token of something else.
    const bobAccount = { name: "Bob", email: "bob@example.com", password: "another good password" };
    expect((await post("/api/auth/sign-up/email", bobAccount)).status).toBe(403);
    const forged = await post("/api/auth/sign-up/email", { ...bobAccount, invitation: "x".repeat(32) });
    expect(forged.status).toBe(403);
    expect(await forged.json()).toMatchObject({ code: "INVITATION_INVALID" });
    expect(await server.db.db.user.count({ where: { email: "bob@example.com" } })).toBe(0);
    const signUp = await post("/api/auth/sign-up/email", { ...bobAccount, invitation: invitation.token });
    expect(signUp.status).toBe(200);
    // Made through the link: the address counts as proven (SSO may link to it on an invitation).
    expect(await server.db.db.user.findUnique({ where: { email: "bob@example.com" } })).toMatchObject({
      emailVerified: true,
    });
    const bobCookie = cookiesOf(signUp);
    const bob = client(bobCookie);
    const ownOrgId = (await bob.orgs.mine.query()).activeOrgId;
    expect(ownOrgId).not.toBe(teamOrgId);
    expect(await bob.orgs.invitation.query({ token: invitation.token })).toMatchObject({
      email: "bob@example.com",
      role: "admin",
      state: "pending",
    });
    expect(await bob.orgs.accept.mutate({ token: invitation.token })).toMatchObject({
      orgId: teamOrgId,
      role: "admin",
      alreadyMember: false,
    });
    // The invited org is now Bob's active one: his next request acts in it.
    expect((await bob.orgs.mine.query()).activeOrgId).toBe(teamOrgId);
    await expect(bob.orgs.accept.mutate({ token: invitation.token })).rejects.toMatchObject({
      data: { code: "BAD_REQUEST" },
    });

    // Bob's other device works in his own org.
    const other = await post("/api/auth/sign-in/email", {
      email: "bob@example.com",
      password: "another good password",
    });
    const otherCookie = cookiesOf(other);
    await client(otherCookie).orgs.switch.mutate({ orgId: ownOrgId });
    const elsewhere = await openSocket(otherCookie);

    const inTeam = await openSocket(bobCookie);
    const bobRow = (await owner.orgs.members.query()).find((m) => m.email === "bob@example.com")!;
    // "At once" is timed from the change's answer: the server ends the sockets before it answers,
    // and the change itself (a transaction, an audit row) may take over a second on a loaded
    // machine, which says nothing about the sockets (the periodic re-check comes every 5 s).
    await owner.orgs.changeRole.mutate({ memberId: bobRow.id, role: "member" });
    let answered = Date.now();
    const demoted = await inTeam.closed;
    expect(demoted.code).toBe(4401);
    expect(demoted.at - answered).toBeLessThan(1_000);
    // As a member he is refused what admins may do, over HTTP at once.
    await expect(bob.orgs.invitations.query()).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });

    const again = await openSocket(bobCookie);
    await owner.orgs.remove.mutate({ memberId: bobRow.id });
    answered = Date.now();
    const removed = await again.closed;
    expect(removed.code).toBe(4401);
    expect(removed.at - answered).toBeLessThan(1_000);
    // His socket in his own org was never touched.
    await new Promise((r) => setTimeout(r, 300));
    expect(elsewhere.isOpen()).toBe(true);
    // No longer a member: the team's members are not his to read (he acts in his own org now).
    expect((await bob.orgs.mine.query()).orgs.map((o) => o.id)).toEqual([ownOrgId]);
    expect((await bob.orgs.members.query()).map((m) => m.email)).toEqual(["bob@example.com"]);
    elsewhere.ws.close();

    const audit = await server.db.db.auditEvent.findMany({
      where: {
        orgId: teamOrgId,
        action: { in: ["org.invitation_created", "org.invitation_accepted", "org.role_changed", "org.member_removed"] },
      },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.map((a) => a.action)).toEqual([
      "org.invitation_created",
      "org.invitation_accepted",
      "org.role_changed",
      "org.member_removed",
    ]);
  }, 60_000);
});
