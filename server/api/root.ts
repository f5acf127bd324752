// The tRPC API: one router per area, each a thin layer over a service.
import { router } from "./trpc";
import { healthRouter } from "./routers/health";
import { sessionsRouter } from "./routers/sessions";
import { filesRouter } from "./routers/files";
import { turnsRouter } from "./routers/turns";
import { approvalsRouter } from "./routers/approvals";
import { questionsRouter } from "./routers/questions";
import { policiesRouter } from "./routers/policies";
import { spillsRouter } from "./routers/spills";
import { sharesRouter } from "./routers/shares";
import { authRouter } from "./routers/auth";
import { attachmentsRouter } from "./routers/attachments";
import { uploadsRouter } from "./routers/uploads";
import { gitRouter } from "./routers/git";
import { auditRouter } from "./routers/audit";
import { orgsRouter } from "./routers/orgs";
import { ssoRouter } from "./routers/sso";
import { projectsRouter } from "./routers/projects";
import { runnersRouter } from "./routers/runners";
import { checkpointsRouter } from "./routers/checkpoints";

export const appRouter = router({
  health: healthRouter,
  sessions: sessionsRouter,
  files: filesRouter,
  turns: turnsRouter,
  approvals: approvalsRouter,
  questions: questionsRouter,
  policies: policiesRouter,
  spills: spillsRouter,
  shares: sharesRouter,
  auth: authRouter,
  attachments: attachmentsRouter,
  uploads: uploadsRouter,
  git: gitRouter,
  audit: auditRouter,
  projects: projectsRouter,
  runners: runnersRouter,
  sso: ssoRouter,
  orgs: orgsRouter,
  checkpoints: checkpointsRouter,
});

export type AppRouter = typeof appRouter;
