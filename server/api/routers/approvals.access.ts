// Who may call the approvals router (format: server/auth/authorize-table.ts): approval cards
// are answered only by the session's creator; the org's admins may see them.
import { defineAccess, SESSION_READ_MEMBERS, SESSION_WRITE } from "../../auth/authorize-table";
import { approvalsRouter } from "./approvals";

export default defineAccess(approvalsRouter, {
  pending: { expect: SESSION_READ_MEMBERS, note: "creator, org admins/owners" },
  answer: {
    expect: SESSION_WRITE,
    input: async (fx) => ({ approvalId: await fx.newApproval(), choice: "reject" }),
    note: "the session's creator only",
  },
});
