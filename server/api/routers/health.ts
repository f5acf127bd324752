// Liveness of the parts a session needs: database and runners. The whole report is the
// operator's; anyone else gets its summary (services/health.ts).
import { summarize } from "../../services/health";
import { publicProcedure, router } from "../trpc";

export const healthRouter = router({
  get: publicProcedure.query(async ({ ctx }) => {
    const report = await ctx.services.health();
    return ctx.operator ? report : summarize(report);
  }),
});
