// Who may call the policies router (format: server/auth/authorize-table.ts): policies are read
// by every member of the org and set by its owners and admins. (otherOrg acts on its own org.)
import { defineAccess, ORG_ADMINS, SIGNED_IN } from "../../auth/authorize-table";
import { policiesRouter } from "./policies";

export default defineAccess(policiesRouter, {
  current: { expect: SIGNED_IN, note: "members of the org" },
  history: { expect: SIGNED_IN, input: () => ({ limit: 5 }), note: "members of the org" },
  modes: { expect: SIGNED_IN, note: "members of the org" },
  setForbiddenModes: { expect: ORG_ADMINS, input: () => ({ forbidden: [] }), note: "org owners and admins" },
  set: { expect: ORG_ADMINS, input: () => ({ rules: [], expectedVersion: 1_000_000 }), note: "org owners and admins" },
});
