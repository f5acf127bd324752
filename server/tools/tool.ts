// The tool slot's one interface. A tool is defined once with `defineTool` and everything
// cross-cutting (validation, approval derivation, fail-safe predicates, the model-facing JSON
// Schema) hangs on the returned `Tool`, so a tool's author writes only its own logic.
import { z } from "zod";
import type { ExecResult, StreamedOutput } from "../executors/contract";
import type { QuestionRequest, Todo } from "../protocol/todos-questions";
import { toToolError, isFatalError } from "./errors";
import { modelJsonSchema, type JsonSchema } from "./schema";
import { formatParseError, type ParseFailure } from "./validate";

export type Capability = "ReadsFiles" | "WritesFiles" | "ExecutesCode" | "Network" | "Interactive";
/** browser = prefers the page's WebContainer, falls back to the runner. */
export type ExecutorKind = "runner" | "browser" | "server";
export type ApprovalLevel = "auto" | "suggest" | "required";
/** built-ins win over external (MCP) tools of the same name and sort first in the catalog. */
export type ToolSource = "builtin" | "external";
export type { JsonSchema };

/** Reads slices of spilled tool output (retrieve_tool_result); provided by the pipeline. */
export interface SpillService {
  read(
    ref: string,
    range: { sessionId: string; offset: number; length: number },
  ): Promise<{ text: string; offset: number; totalBytes: number; end?: number } | undefined>;
  /** Whole lines by 1-based number range, or the lines matching a regular expression. */
  lines?(
    ref: string,
    query: { sessionId: string; start?: number; end?: number; pattern?: string; maxBytes: number },
  ): Promise<SpillLines | undefined>;
  /** Stores the full bytes of a part of a call's result that the tool cut itself (tool_program's steps). */
  store?(bytes: Uint8Array, at: { toolCallId: string }): Promise<{ ref: string }>;
}

export interface SpillLines {
  /** Each line prefixed with its number and a tab. */
  text: string;
  totalBytes: number;
  totalLines: number;
  /** Lines returned (range) or matched (pattern). */
  count: number;
  /** maxBytes cut the answer short. */
  truncated: boolean;
}

export interface ToolSearchHit {
  name: string;
  description: string;
  score: number;
}

/** The session's deferred-tool state as tool_search sees it (see server/tools/session.ts). */
export interface ToolSearchService {
  /** Ranks deferred tools for the query and activates the hits for the rest of the session. */
  searchAndActivate(query: string, limit: number): ToolSearchHit[];
}

/** Server-side services for executor:"server" tools. Members are optional: absent = unavailable. */
/** The session's git remote and a push with its owner's stored credential (git_push; the token
 *  stays on the server and the runner: services/git-remote-services.ts). */
export interface GitToolService {
  /** `note`: the remote is not the one this workspace last pushed to (services/git-remote.ts). */
  remote(): Promise<{ url: string; host: string; note?: string } | { error: string }>;
  /** Pushes the checked-out branch to `url`, which must still be the session's remote. */
  push(url: string, opts: { signal: AbortSignal; onProgress?(chunk: string): void }): Promise<{ message: string }>;
}

/** What a subagent's run gave back (the task tool): its final report, or why it has none. */
export interface SubagentOutcome {
  report: string;
  isError: boolean;
  steps: number;
  calls: number;
}

/** Runs subagents for the turn a task call belongs to (server/engine/subagent.ts): a fresh
 *  conversation on the turn's model with a read-only tool surface. */
export interface SubagentService {
  run(
    job: { description: string; prompt: string },
    call: { callId: string; signal: AbortSignal; progress(chunk: string): void },
  ): Promise<SubagentOutcome>;
}

/** ask_user's way to the person (server/pipeline/questions.ts): opens the question card and
 *  waits for its answer. Absent where nobody can answer (a subagent). */
export interface QuestionService {
  ask(request: QuestionRequest, signal: AbortSignal): Promise<QuestionOutcome>;
}

export type QuestionOutcome =
  { kind: "option"; index: number; label: string } | { kind: "text"; text: string } | { kind: "cancelled" };

/** todo_write's way to the chat: publishes the whole list (a todos.updated event). */
export interface TodoService {
  publish(todos: Todo[]): Promise<void>;
}

export interface ToolServices {
  spills?: SpillService;
  toolSearch?: ToolSearchService;
  git?: GitToolService;
  questions?: QuestionService;
  todos?: TodoService;
  /** Present while a turn runs (absent inside a subagent: subagents do not start subagents). */
  subagents?: SubagentService;
}

export interface ToolContext {
  sessionId: string;
  callId: string;
  signal: AbortSignal;
  /** Runs this tool's operation (op = tool name, or `op`) on the executor the pipeline chose. */
  remote(
    input: unknown,
    opts?: { onProgress?(chunk: string): void; timeoutMs?: number; op?: string; stream?: boolean },
  ): Promise<ExecResult>;
  /** Streams a chunk of progress to observers (UI); never part of the model's result. */
  progress(chunk: string): void;
  services: ToolServices;
}

/** `note`: what the person should know before answering (git_push: the remote changed). */
export type ChangePreview = { diff?: string; note?: string } | { problem: string };

export interface ToolResult {
  output: string;
  isError?: boolean;
  /** shell output is cut head+tail; text spills past the size limit. */
  kind?: "shell" | "text";
  /** The output came from the network: the pipeline wraps it as external content. */
  network?: boolean;
  meta?: Record<string, unknown>;
  /** The unified diff of what the call changed, for its tool card (tool.finished); never sent to the model. */
  diff?: string;
  /** A streamed output (remote with `stream`): the model sees `output`, then this, cut and stored by the pipeline. */
  stream?: StreamedOutput;
}

export type ParseResult<I> = { ok: true; value: I } | ({ ok: false } & ParseFailure);

export interface Tool<I = any> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: z.ZodType<I>;
  /** The model-facing JSON Schema, computed once. Throws if the schema cannot be expressed. */
  readonly jsonSchema: JsonSchema;
  readonly capabilities: readonly Capability[];
  readonly executor: ExecutorKind;
  readonly source: ToolSource;
  readonly searchHint?: string;
  readonly deferLoading: boolean;
  readonly alwaysLoad: boolean;
  /** True for the registry's stand-in of a tool that failed to initialise. */
  readonly failClosed: boolean;
  /** Known field mix-ups, wrong name → right name (e.g. file_path → path). */
  readonly fieldAliases: Readonly<Record<string, string>>;
  /** Validates against the schema; the error names each wrong field and how to fix it. */
  parse(input: unknown): ParseResult<I>;
  /** Runs the tool's own check; returns the model-facing message when the call cannot run. */
  validateInput(input: I, ctx: ToolContext): Promise<string | undefined>;
  /** What the call would change, for its approval card (see ToolDefinition.preview). */
  preview(input: I, ctx: ToolContext): Promise<ChangePreview | undefined>;
  /** Derived from capabilities, then refined by the tool; fails safe to "required". */
  approvalFor(input: I): ApprovalLevel;
  isReadOnly(input: I): boolean;
  isConcurrencySafe(input: I): boolean;
  isDestructive(input: I): boolean;
  isOpenWorld(input: I): boolean;
  /** One line for UI cards. */
  summarize(input: I): string;
  execute(input: I, ctx: ToolContext): Promise<ToolResult>;
}

export interface ToolDefinition<I> {
  name: string;
  /** Usually readFileSync of the .txt beside the tool. */
  description: string;
  capabilities: Capability[];
  executor: ExecutorKind;
  execute(input: I, ctx: ToolContext): Promise<ToolResult>;
  /** A returned string or a throw = a respond error, before any approval is asked. */
  validateInput?(input: I, ctx: ToolContext): Promise<void | string | undefined> | void | string | undefined;
  /**
   * Only when a card will ask the person: works out what the call would change (a diff with the
   * file's real lines). `problem`: it could not be made, so nobody is asked. A throw or
   * undefined: the card shows what the input alone says.
   */
  preview?(input: I, ctx: ToolContext): Promise<ChangePreview | undefined>;
  /** Refines the derived level; undefined keeps it. */
  approvalFor?(input: I): ApprovalLevel | undefined;
  isReadOnly?(input: I): boolean;
  isConcurrencySafe?(input: I): boolean;
  isDestructive?(input: I): boolean;
  isOpenWorld?(input: I): boolean;
  summarize?(input: I): string;
  searchHint?: string;
  deferLoading?: boolean;
  alwaysLoad?: boolean;
  fieldAliases?: Record<string, string>;
}

export function deriveApproval(capabilities: readonly Capability[]): ApprovalLevel {
  if (capabilities.includes("ExecutesCode")) return "required";
  if (capabilities.includes("WritesFiles")) return "suggest";
  return "auto";
}

const APPROVAL_LEVELS = new Set<ApprovalLevel>(["auto", "suggest", "required"]);

// A predicate that throws or returns a non-boolean answers the safe way.
function guard<I>(fn: ((input: I) => boolean) | undefined, safe: boolean | ((input: I) => boolean)) {
  const fallback = typeof safe === "function" ? safe : () => safe;
  return (input: I): boolean => {
    if (!fn) return fallback(input);
    try {
      const v = fn(input);
      return typeof v === "boolean" ? v : fallback(input);
    } catch {
      return fallback(input);
    }
  };
}

function defaultSummary(name: string, input: unknown): string {
  let json: string;
  try {
    json = JSON.stringify(input) ?? "";
  } catch {
    json = "";
  }
  const line = `${name} ${json}`.replace(/\s+/g, " ");
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** Builds a Tool around a JSON-ish schema source; shared by defineTool and external tools. */
export function buildTool<I>(
  def: ToolDefinition<I>,
  schema: { input: z.ZodType<I>; jsonSchema: () => JsonSchema; source: ToolSource; failClosed?: boolean },
): Tool<I> {
  const caps = Object.freeze([...new Set(def.capabilities)]);
  const derived = deriveApproval(caps);
  let cached: JsonSchema | undefined;
  const hasCap = (c: Capability) => caps.includes(c);
  const tool: Tool<I> = {
    name: def.name,
    description: def.description,
    inputSchema: schema.input,
    get jsonSchema() {
      return (cached ??= schema.jsonSchema());
    },
    capabilities: caps,
    executor: def.executor,
    source: schema.source,
    searchHint: def.searchHint,
    deferLoading: def.deferLoading === true && def.alwaysLoad !== true,
    alwaysLoad: def.alwaysLoad === true,
    failClosed: schema.failClosed === true,
    fieldAliases: Object.freeze({ ...(def.fieldAliases ?? {}) }),
    parse(input) {
      const r = schema.input.safeParse(input);
      if (r.success) return { ok: true, value: r.data };
      return { ok: false, ...formatParseError(tool, input, r.error) };
    },
    async validateInput(input, ctx) {
      if (!def.validateInput) return undefined;
      try {
        const r = await def.validateInput(input, ctx);
        return typeof r === "string" && r.length > 0 ? r : undefined;
      } catch (e) {
        if (isFatalError(e)) throw e;
        return toToolError(e).message;
      }
    },
    async preview(input, ctx) {
      if (!def.preview) return undefined;
      try {
        return await def.preview(input, ctx);
      } catch (e) {
        if (isFatalError(e)) throw e;
        return undefined;
      }
    },
    approvalFor(input) {
      if (!def.approvalFor) return derived;
      try {
        const refined = def.approvalFor(input);
        if (refined === undefined) return derived;
        return APPROVAL_LEVELS.has(refined) ? refined : "required";
      } catch {
        return "required";
      }
    },
    isReadOnly: guard(def.isReadOnly, false),
    isConcurrencySafe: guard(def.isConcurrencySafe, false),
    isDestructive: guard(def.isDestructive, () => hasCap("WritesFiles") || hasCap("ExecutesCode")),
    isOpenWorld: guard(def.isOpenWorld, () => hasCap("Network")),
    summarize(input) {
      try {
        if (def.summarize) return def.summarize(input).split("\n")[0];
      } catch {
        /* fall through to the generic line */
      }
      return defaultSummary(def.name, input);
    },
    execute: (input, ctx) => def.execute(input, ctx),
  };
  return tool;
}

/** Defines a built-in tool from a zod object schema. */
export function defineTool<S extends z.ZodObject<any>>(
  def: ToolDefinition<z.infer<S>> & { input: S },
): Tool<z.infer<S>> {
  return buildTool<z.infer<S>>(def, {
    input: def.input as unknown as z.ZodType<z.infer<S>>,
    jsonSchema: () => modelJsonSchema(def.input),
    source: "builtin",
  });
}
