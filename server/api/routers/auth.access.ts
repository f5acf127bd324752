// Who may call the auth router (format: server/auth/authorize-table.ts).
import { defineAccess, PUBLIC } from "../../auth/authorize-table";
import { authRouter } from "./auth";

export default defineAccess(authRouter, {
  whoami: { expect: PUBLIC, note: "anyone (says who they are, or why they are refused)" },
});
