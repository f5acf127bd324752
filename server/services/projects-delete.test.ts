// Who may delete a project, against a real server with accounts on (SQLite, and PostgreSQL when
// reachable), over HTTP: deleting removes every person's sessions and workspace in it, so a
// member who made a project deletes it only while all the work in it is theirs; the org's
// owners and admins delete any (the access table, api/access-table.test.ts, covers the rest).
// That check and the delete are one: a teammate's session made in the project while a member
// deletes it is never lost (either the delete is refused or the session is not made), whether
// it lands in the window between check and delete (hooked), is being written when the delete
// comes (PostgreSQL: the delete waits for it, then sees it) or races it (started together).
import { describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { useAccountsServer } from "../testing/accounts";
import { testDatabases } from "../testing/db";
import { callHttp } from "../auth/authorize-testing";
import { createProjectService } from "./projects";
import type { Placement, RunnerOps } from "./placement";

describe.each(testDatabases())("deleting a project on %s", (provider) => {
  const server = useAccountsServer(provider, { name: "projects-delete" });
  const db = () => server.db.db;

  /** A project the member made, with a session of each person named (their own, in it). */
  async function membersProject(sessionsOf: Array<"owner" | "member">) {
    const { orgId, users } = server.people.fixture;
    const project = await db().project.create({
      data: { orgId, name: `p-${randomBytes(4).toString("hex")}`, createdById: users.member },
    });
    const sessions: string[] = [];
    for (const who of sessionsOf)
      sessions.push(
        (
          await db().session.create({
            data: { title: who, ownerId: users[who], orgId, projectId: project.id, workspace: "" },
          })
        ).id,
      );
    return { id: project.id, sessions };
  }
  const remove = (who: "member" | "admin", id: string) =>
    callHttp(server.quiver.url, server.people.headers[who], "mutation", "projects.remove", { id });
  const exists = async (sessionId: string) => (await db().session.count({ where: { id: sessionId } })) === 1;

  it("refuses its member creator while another person's session is in it", async () => {
    const p = await membersProject(["member", "owner"]);
    expect(await remove("member", p.id)).toMatchObject({ ok: false, code: "FORBIDDEN" });
    expect(await exists(p.sessions[1])).toBe(true);
    expect(await exists(p.sessions[0])).toBe(true);
    // The org's admins may.
    expect(await remove("admin", p.id)).toEqual({ ok: true });
    expect(await exists(p.sessions[1])).toBe(false);
  });

  it("refuses its member creator while another person has a workspace in it", async () => {
    const p = await membersProject(["member"]);
    await db().workspace.create({
      data: { id: `w-${randomBytes(4).toString("hex")}`, projectId: p.id, userId: server.people.fixture.users.admin },
    });
    expect(await remove("member", p.id)).toMatchObject({ ok: false, code: "FORBIDDEN" });
    expect(await db().project.count({ where: { id: p.id } })).toBe(1);
  });

  it("lets its member creator delete it when all the work in it is theirs", async () => {
    const p = await membersProject(["member"]);
    expect(await remove("member", p.id)).toEqual({ ok: true });
    expect(await exists(p.sessions[0])).toBe(false);
  });

  it("refuses the member when a teammate's session is made between the check and the delete", async () => {
    const { orgId, users } = server.people.fixture;
    const p = await membersProject(["member"]);
    const own = await db().workspace.create({
      data: { id: `w-${randomBytes(4).toString("hex")}`, projectId: p.id, userId: users.member, state: "ready" },
    });
    let teammates = "";
    // The hook the service runs between its check and its delete (events still to be written).
    const projects = createProjectService(db(), {
      placement: {} as Placement,
      ops: {} as RunnerOps,
      dbProvider: provider,
      beforeSessionsRemoved: async () => {
        teammates = (
          await db().session.create({
            data: { title: "teammate's", ownerId: users.owner, orgId, projectId: p.id, workspace: "" },
          })
        ).id;
      },
    });
    await expect(projects.remove({ userId: users.member, orgId, role: "member" }, p.id)).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    expect(teammates).not.toBe("");
    expect(await exists(teammates)).toBe(true);
    expect(await exists(p.sessions[0])).toBe(true);
    // The member's workspace, marked for deletion on the way, is usable again (made anew on next use).
    expect((await db().workspace.findUnique({ where: { id: own.id } }))?.state).toBe("creating");
  });

  it.each(["member", "admin"] as const)(
    "refuses the %s when a turn starts between the check and the delete, and keeps it",
    async (who) => {
      const { orgId, users } = server.people.fixture;
      const p = await membersProject(["member"]);
      let turnId = "";
      const projects = createProjectService(db(), {
        placement: {} as Placement,
        ops: {} as RunnerOps,
        dbProvider: provider,
        // A message sent in the project's session after the "no running turn" check.
        beforeSessionsRemoved: async () => {
          turnId = (await db().turn.create({ data: { sessionId: p.sessions[0], status: "running" } })).id;
        },
      });
      await expect(projects.remove({ userId: users[who], orgId, role: who }, p.id)).rejects.toMatchObject({
        code: "CONFLICT",
        message: expect.stringContaining("A turn was sent while it was being deleted"),
      });
      expect(turnId).not.toBe("");
      expect(await db().turn.findUnique({ where: { id: turnId } })).toMatchObject({ status: "running" });
      expect(await exists(p.sessions[0])).toBe(true);
      expect(await db().project.count({ where: { id: p.id } })).toBe(1);
    },
  );

  it.runIf(provider === "postgresql")(
    "waits for a turn still being started (its session locked, as turn-rows' begin does), then refuses",
    async () => {
      const p = await membersProject(["member"]);
      const sender = new pg.Client({ connectionString: server.db.url });
      await sender.connect();
      try {
        await sender.query("BEGIN");
        await sender.query(`SELECT 1 FROM "Session" WHERE "id" = $1 FOR UPDATE`, [p.sessions[0]]);
        const turnId = `t-${randomBytes(6).toString("hex")}`;
        await sender.query(
          `INSERT INTO "Turn" ("id", "sessionId", "status", "startedAt") VALUES ($1, $2, 'running', now())`,
          [turnId, p.sessions[0]],
        );
        const removing = remove("admin", p.id);
        await new Promise((r) => setTimeout(r, 1_000));
        await sender.query("COMMIT");
        expect(await removing).toMatchObject({ ok: false, code: "CONFLICT" });
        expect(await exists(p.sessions[0])).toBe(true);
        expect(await db().turn.count({ where: { id: turnId, status: "running" } })).toBe(1);
      } finally {
        await sender.end();
      }
    },
  );

  it.runIf(provider === "postgresql")(
    "waits for a teammate's session still being written, then refuses the member",
    async () => {
      const { orgId, users } = server.people.fixture;
      const p = await membersProject(["member"]);
      const teammate = new pg.Client({ connectionString: server.db.url });
      await teammate.connect();
      try {
        // The teammate's session is written but not committed while the delete runs: no check
        // made before the delete's lock can see it, and the project's delete would take it along.
        await teammate.query("BEGIN");
        const id = `s-${randomBytes(6).toString("hex")}`;
        await teammate.query(
          `INSERT INTO "Session" ("id", "title", "ownerId", "orgId", "workspace", "projectId", "updatedAt")
           VALUES ($1, 'teammate''s', $2, $3, '', $4, now())`,
          [id, users.owner, orgId, p.id],
        );
        const removing = remove("member", p.id);
        await new Promise((r) => setTimeout(r, 1_000));
        await teammate.query("COMMIT");
        expect(await removing).toMatchObject({ ok: false, code: "FORBIDDEN" });
        expect(await exists(id)).toBe(true);
        expect(await exists(p.sessions[0])).toBe(true);
      } finally {
        await teammate.end();
      }
    },
  );

  it("never loses a teammate's session made while the member deletes the project", { timeout: 120_000 }, async () => {
    const outcomes = { refused: 0, deleted: 0 };
    for (let i = 0; i < 40; i++) {
      const p = await membersProject(["member"]);
      const [removed, made] = await Promise.all([
        remove("member", p.id),
        fetch(`${server.quiver.url}/api/trpc/sessions.create`, {
          method: "POST",
          headers: { ...server.people.headers.admin, "content-type": "application/json", origin: server.quiver.url },
          body: JSON.stringify({ title: "teammate's", projectId: p.id }),
        }).then(async (res) => ((await res.json()) as { result?: { data: { id: string } } }).result?.data.id),
      ]);
      const projectLeft = (await db().project.count({ where: { id: p.id } })) === 1;
      // A session the teammate was told was made is there; a delete that went through took the
      // project, and one refused left it.
      if (made) expect(await exists(made), `attempt ${i}`).toBe(true);
      expect(projectLeft, `attempt ${i}`).toBe(!removed.ok);
      if (removed.ok) outcomes.deleted++;
      else {
        expect(removed, `attempt ${i}`).toMatchObject({ code: "FORBIDDEN" });
        outcomes.refused++;
      }
    }
    console.log(`projects-delete race on ${provider}: ${JSON.stringify(outcomes)}`);
  });
});
