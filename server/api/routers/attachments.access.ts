// Who may call the attachments router (format: server/auth/authorize-table.ts).
import { defineAccess, SESSION_READ } from "../../auth/authorize-table";
import { attachmentsRouter } from "./attachments";

export default defineAccess(attachmentsRouter, {
  read: {
    expect: SESSION_READ,
    input: (fx) => ({ sessionId: fx.sessionId, id: "none" }),
    note: "creator, org admins/owners, its viewers",
  },
});
