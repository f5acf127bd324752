// Who may call the audit router (format: server/auth/authorize-table.ts): the active org's
// owners and admins (otherOrg reads its own org's trail).
import { defineAccess, ORG_ADMINS } from "../../auth/authorize-table";
import { auditRouter } from "./audit";

export default defineAccess(auditRouter, {
  list: { expect: ORG_ADMINS, input: () => ({ kind: "share", limit: 5 }), note: "org owners and admins" },
  facets: { expect: ORG_ADMINS, note: "org owners and admins" },
});
