// Test fixture for project-delete-crash.test.ts: a server process deleting a project with the
// real database, stopped (waiting to be killed -9) when it asks the first workspace's runner to
// remove its folder, after marking the project's workspaces `deleting`:
//   tsx server/services/project-delete-crash-child.ts <database-url> <actor json> <project-id>
// It prints `stopped` there.
import { openDb } from "../db";
import type { Placement, RunnerOps } from "./placement";
import { createProjectService } from "./projects";
import type { Actor } from "./types";

const [url, actorJson, projectId] = process.argv.slice(2);
const { db, provider } = await openDb(url);
const ops: RunnerOps = {
  isLive: () => true,
  runOn: () => {
    process.stdout.write("stopped\n");
    return new Promise<never>(() => undefined);
  },
};
const projects = createProjectService(db, { placement: {} as Placement, ops, dbProvider: provider });
await projects.remove(JSON.parse(actorJson) as Actor, projectId);
