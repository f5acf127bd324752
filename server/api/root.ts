// The tRPC API: one router per area, each a thin layer over a service.
import { router } from "./trpc";
import { healthRouter } from "./routers/health";
import { sessionsRouter } from "./routers/sessions";

export const appRouter = router({
  health: healthRouter,
  sessions: sessionsRouter,
});

export type AppRouter = typeof appRouter;
