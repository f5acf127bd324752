// The tRPC API: one router per area, each a thin layer over a service.
import { router } from "./trpc";
import { healthRouter } from "./routers/health";
import { sessionsRouter } from "./routers/sessions";
import { filesRouter } from "./routers/files";

export const appRouter = router({
  health: healthRouter,
  sessions: sessionsRouter,
  files: filesRouter,
});

export type AppRouter = typeof appRouter;
