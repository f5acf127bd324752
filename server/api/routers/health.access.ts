// Who may call the health router (format: server/auth/authorize-table.ts).
import { defineAccess, PUBLIC } from "../../auth/authorize-table";
import { healthRouter } from "./health";

export default defineAccess(healthRouter, {
  get: { expect: PUBLIC, note: "anyone (liveness)" },
});
