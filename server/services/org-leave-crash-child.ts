// Test fixture for orgs-crash.test.ts: a server process removing a member from an org (or a
// member leaving it) with the real database, stopped (waiting to be killed -9) once the change
// is committed, where it would next close the person's sockets and stop their work:
//   tsx server/services/org-leave-crash-child.ts <database-url> <actor json> remove:<member-id>|leave:<org-id>
// It prints `stopped` there.
import { openDirectDb } from "../db";
import { createOrgService } from "./orgs";
import type { Actor } from "./types";

const [url, actorJson, action] = process.argv.slice(2);
const { db } = await openDirectDb(url);
const actor = JSON.parse(actorJson) as Actor;
const orgs = createOrgService({
  db,
  closeSockets: () => {
    process.stdout.write("stopped\n");
    return new Promise<never>(() => undefined);
  },
  stopWork: async () => {
    throw new Error("not reached: the process is killed before");
  },
});
const [verb, id] = action.split(":");
if (verb === "remove") await orgs.remove(actor, id);
else await orgs.leave(actor, id);
