// Who may delete a project, against a real server with accounts on (SQLite, and PostgreSQL when
// reachable), over HTTP: deleting removes every person's sessions and workspace in it, so a
// member who made a project deletes it only while all the work in it is theirs; the org's
// owners and admins delete any (the access table, api/access-table.test.ts, covers the rest).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { testServerEnv } from "../testing/env";
import { startQuiver, type Quiver } from "../app";
import { createTestDb, testDatabases, type TestDb } from "../testing/db";
import { callHttp, signInPeople, type People } from "../auth/authorize-testing";

const root = join(import.meta.dirname, "..", "..");

describe.each(testDatabases())("deleting a project on %s", (provider) => {
  let quiver: Quiver;
  let db: TestDb & { dispose(): Promise<void> };
  let dataDir: string;
  let people: People;

  beforeAll(async () => {
    db = await createTestDb(provider);
    dataDir = mkdtempSync(join(tmpdir(), "quiver-projects-delete-"));
    const env = testServerEnv(dataDir, { DATABASE_URL: db.url, QUIVER_AUTH: "accounts", QUIVER_SIGNUP: "open" });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
    people = await signInPeople(quiver.url, db.db);
  }, 90_000);
  afterAll(async () => {
    await quiver?.stop();
    await db?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** A project the member made, with a session of each person named (their own, in it). */
  async function membersProject(sessionsOf: Array<"owner" | "member">) {
    const { orgId, users } = people.fixture;
    const project = await db.db.project.create({
      data: { orgId, name: `p-${randomBytes(4).toString("hex")}`, createdById: users.member },
    });
    const sessions: string[] = [];
    for (const who of sessionsOf)
      sessions.push(
        (
          await db.db.session.create({
            data: { title: who, ownerId: users[who], orgId, projectId: project.id, workspace: "" },
          })
        ).id,
      );
    return { id: project.id, sessions };
  }
  const remove = (who: "member" | "admin", id: string) =>
    callHttp(quiver.url, people.headers[who], "mutation", "projects.remove", { id });
  const exists = async (sessionId: string) => (await db.db.session.count({ where: { id: sessionId } })) === 1;

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
    await db.db.workspace.create({
      data: { id: `w-${randomBytes(4).toString("hex")}`, projectId: p.id, userId: people.fixture.users.admin },
    });
    expect(await remove("member", p.id)).toMatchObject({ ok: false, code: "FORBIDDEN" });
    expect(await db.db.project.count({ where: { id: p.id } })).toBe(1);
  });

  it("lets its member creator delete it when all the work in it is theirs", async () => {
    const p = await membersProject(["member"]);
    expect(await remove("member", p.id)).toEqual({ ok: true });
    expect(await exists(p.sessions[0])).toBe(false);
  });
});
