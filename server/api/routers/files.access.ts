// Who may call the files router (format: server/auth/authorize-table.ts). Reading: the
// session's creator, the org's admins (read-only) and its viewers (redacted); raw bytes cannot
// be redacted, so viewers may not; every change: the creator only.
import { defineAccess, SESSION_READ, SESSION_READ_MEMBERS, SESSION_WRITE } from "../../auth/authorize-table";
import { filesRouter } from "./files";

const READ = { expect: SESSION_READ, note: "creator, org admins/owners, its viewers (redacted)" };
const WRITE = { expect: SESSION_WRITE, note: "the session's creator" };

export default defineAccess(filesRouter, {
  tree: READ,
  search: READ,
  find: READ,
  read: READ,
  raw: { expect: SESSION_READ_MEMBERS, note: "creator, org admins/owners (bytes cannot be redacted for viewers)" },
  // Bytes used and the limit tell a viewer nothing the tree does not: viewers may read them.
  usage: READ,
  // What the editor shows of a file it may open: a viewer sees the same markers.
  diagnostics: READ,
  changes: READ,
  original: READ,
  replace: WRITE,
  commit: WRITE,
  save: WRITE,
  upload: WRITE,
  create: WRITE,
  rename: WRITE,
  remove: WRITE,
});
