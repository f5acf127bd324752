// Who may call the spills router (format: server/auth/authorize-table.ts).
import { defineAccess, SESSION_READ } from "../../auth/authorize-table";
import { spillsRouter } from "./spills";

export default defineAccess(spillsRouter, {
  read: { expect: SESSION_READ, note: "creator, org admins/owners, its viewers (redacted)" },
});
