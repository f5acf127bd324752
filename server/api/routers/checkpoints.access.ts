// Who may call the checkpoints router (format: server/auth/authorize-table.ts): the agent's
// changes are read like the session (its viewers too, redacted); accepting, reverting and
// restoring change the workspace or its review: the session's creator only.
import { defineAccess, SESSION_READ, SESSION_WRITE } from "../../auth/authorize-table";
import { checkpointsRouter } from "./checkpoints";

const READ = { expect: SESSION_READ, note: "creator, org admins/owners, its viewers (redacted)" };
const WRITE = { expect: SESSION_WRITE, note: "the session's creator" };
const hunk = (fx: { sessionId: string }) => ({ sessionId: fx.sessionId, path: "a.txt", hunkId: "0".repeat(16) });

export default defineAccess(checkpointsRouter, {
  list: READ,
  diff: READ,
  acceptHunk: { ...WRITE, input: hunk },
  revertHunk: { ...WRITE, input: hunk },
  restore: { ...WRITE, input: (fx) => ({ sessionId: fx.sessionId, turnId: "t0", dryRun: true }) },
});
