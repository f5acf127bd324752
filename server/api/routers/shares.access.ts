// Who may call the shares router (format: server/auth/authorize-table.ts): a session's links
// are made by its creator; the org's admins may list and revoke them too (as before).
import { defineAccess, SESSION_READ_MEMBERS, SESSION_WRITE } from "../../auth/authorize-table";
import { sharesRouter } from "./shares";

export default defineAccess(sharesRouter, {
  create: { expect: SESSION_WRITE, note: "the session's creator" },
  list: { expect: SESSION_READ_MEMBERS, note: "creator, org admins/owners" },
  // A link of its own: an allowed call revokes it, never the viewer's.
  revoke: {
    expect: SESSION_READ_MEMBERS,
    input: async (fx) => ({ linkId: await fx.newShareLink() }),
    note: "creator, org admins/owners",
  },
});
