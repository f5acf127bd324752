// The composed services of one server process, built once in server/app.ts and handed to
// tRPC's context and the socket endpoints. Fields grow as parts land; nothing else holds them.
import type { Env } from "../env";
import type { Db, DbProvider, TurnRows } from "../db";
import type { SessionService } from "./sessions";
import type { HealthReport } from "./health";
import type { RunnerPool } from "../executors/runner-pool";
import type { FileService } from "./files";
import type { Engine } from "../engine/engine";
import type { EventHub } from "../hub/events";
import type { Pipeline } from "../pipeline";
import type { PolicyService } from "./policies";
import type { SpillStore } from "./spills";
import type { ShareService } from "./shares";
import type { OrgService } from "./orgs";
import type { SsoService } from "./sso";
import type { SessionHistory } from "../hub/history";
import type { RunnerRegistry } from "./runners";
import type { Placement } from "./placement";
import type { ProjectService } from "./projects";
import type { CheckpointService } from "./checkpoints";
import type { RewindService } from "./rewind";

export interface Services {
  env: Env;
  db: Db;
  dbProvider: DbProvider;
  sessions: SessionService;
  runners: RunnerPool;
  /** Every runner seen, in the database (services/runners.ts). */
  runnerRegistry: RunnerRegistry;
  /** Which runner holds each workspace (services/placement.ts). */
  placement: Placement;
  /** Projects and each person's workspace of them (services/projects.ts). */
  projects: ProjectService;
  /** The person's IDE file operations (services/files.ts), wired where the runner pool is. */
  files: FileService;
  health(): Promise<HealthReport>;
  /** Model turns (engine/): send, cancel, recover. */
  engine: Engine;
  /** Per-session event log and fan-out (hub/). */
  hub: EventHub;
  /** A long session's turns a window at a time (the IDE opens at the latest). */
  history: SessionHistory;
  /** Pending approval cards and answers (the tool pipeline). */
  approvals: Pick<Pipeline, "answerApproval" | "pendingApprovals" | "cancelSession" | "answerQuestion">;
  /** Versioned org policy rules. */
  policies: PolicyService;
  /** Full outputs of truncated tool results (the IDE's viewer reads pages of them). */
  spills: Pick<SpillStore, "read">;
  /** Orgs, their members and invitations (services/orgs.ts). */
  orgs: OrgService;
  /** An org's single sign-on settings (services/sso.ts). */
  sso: SsoService;
  /** Read-only share links of sessions. */
  shares: ShareService;
  /** Checkpoints of sessions' workspaces and the review of the agent's changes (services/checkpoints.ts). */
  checkpoints: CheckpointService;
  /** Conversation rewinds (services/rewind.ts). */
  rewinds: RewindService;
  /** Images attached to messages (stored by the engine with the message; read through the driver). */
  attachments: Pick<TurnRows, "images">;
}

/** A signed-in member (the owner of an embedded server: see server/auth). */
export interface Actor {
  userId: string;
  orgId: string;
  role: "owner" | "admin" | "member";
  /** With accounts on: the better-auth session (device) the request came with. */
  authSessionId?: string;
}
