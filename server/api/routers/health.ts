// Liveness of the parts a session needs: database and runners.
import { publicProcedure, router } from "../trpc";

export const healthRouter = router({
  get: publicProcedure.query(({ ctx }) => ctx.services.health()),
});
