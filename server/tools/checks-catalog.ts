// run_check's model-facing entry per session: its `name` an enum of the workspace's declared
// checks (quiver.checks.json, read through the runner and cached until the workspace's file
// version moves) and its description listing each check with the outcome and time of its latest
// run in the session. Prompt cache: the entry is rebuilt at most once per turn — on a turn's
// first request, and only when a check ran in an earlier turn or the file changed — so the
// tool list keeps its bytes across the steps of a turn (see checks-catalog.test.ts).
import type { Executor } from "../executors/contract";
import { CHECKS_FILE, ChecksListMeta, checkNames } from "../protocol/checks";
import type { CatalogEntry } from "./catalog";

export const RUN_CHECK = "run_check";

export interface CheckRun {
  outcome: string;
  /** When it ended, ms since epoch. */
  at: number;
}

const MAX_SESSIONS = 1000;

/** Latest run of each check per session, in this server's memory (lost on restart: the
 *  description then says "not run yet in this session"). */
export class CheckRuns {
  private readonly sessions = new Map<string, Map<string, CheckRun>>();

  record(sessionId: string, name: string, run: CheckRun): void {
    let runs = this.sessions.get(sessionId);
    if (!runs) {
      if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
      this.sessions.set(sessionId, (runs = new Map()));
    }
    runs.set(name, run);
  }

  latest(sessionId: string): ReadonlyMap<string, CheckRun> {
    return this.sessions.get(sessionId) ?? new Map();
  }
}

/** The process's record, written by run_check and tool_transaction. */
export const checkRuns = new CheckRuns();

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19);

/** The dynamic part of run_check's description. */
export function checksDescription(list: ChecksListMeta, runs: ReadonlyMap<string, CheckRun>): string {
  if (!list.ok)
    return list.missing
      ? `This workspace declares no checks (no ${CHECKS_FILE} at its root); a call says so.`
      : `The checks file cannot be used: ${list.error}`;
  const lines = checkNames(list.checks).map((n) => {
    const run = runs.get(n);
    const last = run ? `latest run ${clock(run.at)} UTC: ${run.outcome}` : "not run yet in this session";
    return `- ${n}: \`${list.checks[n].argv.join(" ")}\` — ${last}`;
  });
  return `Checks declared in ${CHECKS_FILE}:\n${lines.join("\n")}`;
}

export function runCheckEntry(
  base: CatalogEntry,
  list: ChecksListMeta,
  runs: ReadonlyMap<string, CheckRun>,
): CatalogEntry {
  const schema = base.input_schema as { properties?: Record<string, Record<string, unknown>> };
  const names = list.ok ? checkNames(list.checks) : [];
  const name = names.length > 0 ? { ...schema.properties?.name, enum: names } : schema.properties?.name;
  return {
    name: base.name,
    description: `${base.description}\n\n${checksDescription(list, runs)}`,
    input_schema: { ...base.input_schema, properties: { ...schema.properties, name } },
  };
}

interface Built {
  turn: string | undefined;
  base: CatalogEntry;
  entry: CatalogEntry;
}

export interface CheckCatalogDeps {
  runner: Pick<Executor, "run">;
  /** The session's workspace file version (moves on every change the runner sees). */
  version(sessionId: string): number | undefined;
  runs?: CheckRuns;
}

export class CheckCatalog {
  private readonly lists = new Map<string, { version: number | undefined; list: ChecksListMeta }>();
  private readonly built = new Map<string, Built>();
  private readonly runs: CheckRuns;

  constructor(private readonly deps: CheckCatalogDeps) {
    this.runs = deps.runs ?? checkRuns;
  }

  /** The parsed checks file of the session's workspace, read again when its version moved. */
  async list(sessionId: string): Promise<ChecksListMeta> {
    const version = this.deps.version(sessionId);
    const cached = this.lists.get(sessionId);
    if (cached && version !== undefined && cached.version === version) return cached.list;
    let list: ChecksListMeta;
    try {
      const r = await this.deps.runner.run({
        sessionId,
        callId: `checks_${Date.now()}`,
        op: "checks_list",
        input: {},
        deadline: Date.now() + 10_000,
        signal: AbortSignal.timeout(10_000),
      });
      const parsed = ChecksListMeta.safeParse(r.meta);
      list = parsed.success
        ? parsed.data
        : { ok: false, missing: false, error: r.output || "the runner gave no list of checks" };
    } catch (err) {
      list = {
        ok: false,
        missing: false,
        error: `the workspace's runner cannot be reached: ${(err as Error).message}`,
      };
    }
    if (this.lists.size >= MAX_SESSIONS) this.lists.clear();
    this.lists.set(sessionId, { version, list });
    return list;
  }

  /**
   * Replaces run_check's entry in `entries` (same place, so the order holds) with the session's.
   * `turn`: the running turn; within one turn the entry keeps its bytes.
   */
  async patch(sessionId: string, entries: CatalogEntry[], turn: string | undefined): Promise<CatalogEntry[]> {
    const at = entries.findIndex((e) => e.name === RUN_CHECK);
    if (at < 0) return entries;
    const base = entries[at];
    const prev = this.built.get(sessionId);
    let entry: CatalogEntry;
    if (prev && turn !== undefined && prev.turn === turn && prev.base === base) entry = prev.entry;
    else {
      entry = runCheckEntry(base, await this.list(sessionId), this.runs.latest(sessionId));
      if (this.built.size >= MAX_SESSIONS) this.built.clear();
      this.built.set(sessionId, { turn, base, entry });
    }
    const out = entries.slice();
    out[at] = entry;
    return out;
  }
}
