// Who may call the uploads router (format: server/auth/authorize-table.ts): the disk limit is
// read by every member of the org and set by its owners and admins.
import { defineAccess, ORG_ADMINS, SIGNED_IN } from "../../auth/authorize-table";
import { uploadsRouter } from "./uploads";

export default defineAccess(uploadsRouter, {
  limits: { expect: SIGNED_IN, note: "members of the org" },
  setDiskLimit: { expect: ORG_ADMINS, input: () => ({ limitMb: null }), note: "org owners and admins" },
});
