// Who may call the runners router (format: server/auth/authorize-table.ts): the org's owners
// and admins see the runners and their load (otherOrg sees the same runners: they serve every org).
import { defineAccess, ORG_ADMINS } from "../../auth/authorize-table";
import { runnersRouter } from "./runners";

export default defineAccess(runnersRouter, {
  list: { expect: ORG_ADMINS, note: "org owners and admins" },
});
