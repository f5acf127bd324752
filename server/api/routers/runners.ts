// Runners, for the org's admins: every runner seen (live or gone since when), its labels,
// capacity, free disk and load, and the workspaces placed on it (services/runners.ts).
import { adminProcedure, router } from "../trpc";

export const runnersRouter = router({
  list: adminProcedure.query(({ ctx }) => ctx.services.runnerRegistry.overview(ctx.actor.orgId)),
});
