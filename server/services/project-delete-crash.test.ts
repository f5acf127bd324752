// A server killed -9 in the middle of a project's delete (project-delete-crash-child.ts, a real
// process), once its workspaces are marked `deleting` and a runner was asked to remove a folder,
// before the rows go: the project stays, and the next start of a single server (SQLite's only
// kind; stopped-recovery.ts) makes its workspaces usable again, as a refused delete leaves them,
// instead of refusing their sessions as "being deleted" until the project is deleted again.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { runUntilStopped } from "../testing/stopped-child";
import { seedSession } from "../testing/pipeline";
import { createRewindService } from "./rewind";
import { createCheckpointService } from "./checkpoints";
import { startStoppedRecovery } from "./stopped-recovery";
import type { Actor } from "./types";

async function crashInDelete(url: string, actor: Actor, projectId: string): Promise<void> {
  await (
    await runUntilStopped("server/services/project-delete-crash-child.ts", [url, JSON.stringify(actor), projectId])
  ).kill9();
}

describe.each(testDatabases())("a server killed -9 while deleting a project, on %s", (provider) => {
  const t = useTestDb(provider);

  it("leaves the project; the next start makes its workspaces usable again", async () => {
    const { db } = t.current;
    const { org, user, actor } = await seedSession(db);
    const project = await db.project.create({ data: { orgId: org.id, name: "doomed", createdById: user.id } });
    await db.runnerNode.create({ data: { id: `r-${project.id}` } });
    const ws = await db.workspace.create({
      data: {
        id: `w-${project.id}`,
        projectId: project.id,
        userId: user.id,
        runnerId: `r-${project.id}`,
        state: "ready",
      },
    });
    const session = await db.session.create({
      data: { title: "s", ownerId: user.id, orgId: org.id, projectId: project.id, workspaceId: ws.id, workspace: "" },
    });
    await crashInDelete(t.current.url, actor as Actor, project.id);
    expect(await db.workspace.findUnique({ where: { id: ws.id } })).toMatchObject({ state: "deleting" });

    const log: string[] = [];
    const publish = async () => undefined;
    const runner = { run: async () => ({ ok: false, output: "" }) };
    const rewinds = createRewindService({ db, checkpoints: createCheckpointService({ db, runner, publish }), publish });
    const start = startStoppedRecovery({ db, publish, rewinds, log: (l) => log.push(l) });
    await start.atStart();
    await start.dispose();
    expect(await db.workspace.findUnique({ where: { id: ws.id } })).toMatchObject({ state: "creating", error: null });
    expect(await db.session.count({ where: { id: session.id } })).toBe(1);
    expect(log.join("\n")).toMatch(/1 workspace\(s\) of a project delete the server stopped in are usable again/);
  });
});
