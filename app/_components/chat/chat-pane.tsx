"use client";
// The agent chat: the session's timeline (messages, collapsed reasoning, tool cards with inline
// approvals, quiet notices, errors, per-turn usage), a composer, Stop while a turn runs, and
// the session's model under the composer. Images go with a message: pasted, dropped on the pane
// or picked with the paperclip.
// Each sent message has a ⋯ menu to rewind files and/or the conversation to before it (turn-menu,
// rewind-dialog, rewind-bar); rewound turns stay shown, dimmed and marked.
// Read-only (a share link): the timeline alone.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { pendingApprovals, type ChatItem, type SessionState } from "../../_lib/session-state";
import { useSessionApi } from "../../_lib/session-api";
import { useReadOnly } from "../../_lib/read-only";
import { toolFileTarget, type FileTarget } from "../../_lib/tool-file";
import { Markdown } from "./markdown";
import { ToolCardView } from "./tool-card";
import { WithSubagent } from "./subagent-card";
import { ApprovalNotice } from "./approval-notice";
import { ChatAnnouncer } from "./chat-announcer";
import { QuestionCard } from "./question-card";
import { TodoList } from "./todo-list";
import { SpillViewer } from "./spill-viewer";
import { ModelPicker } from "./model-picker";
import { ModeChip, PlanCard } from "./mode-chip";
import { ContextMeter } from "./context-meter";
import { TurnCost } from "../sessions/cost-total";
import { tokensText } from "../../_lib/session-cost";
import { QueuedMessages } from "./message-queue";
import { useSend } from "./use-send";
import { useMentions } from "./mentions";
import { AttachButton, DraftThumbs, useDraftImages } from "./composer-images";
import { MessageImages } from "./message-images";
import { TurnLinks, TurnMenu } from "./turn-menu";
import { useRewind } from "./rewind-bar";
import { rewoundTurns } from "../../_lib/checkpoint-state";
import rewindStyles from "./rewind.module.css";
import styles from "./chat.module.css";

/** Items shown at first, and added by each "Show earlier": a long session's log stays a few
 *  hundred elements to lay out on every streamed token, not tens of thousands. */
export const CHAT_WINDOW = 200;

/** Turn ends after which the same message may be sent again (a failure may be passing). */
const RETRYABLE = new Set(["failed", "interrupted", "cancelled"]);

function Usage({
  sessionId,
  state,
  turnId,
  onRetry,
}: {
  sessionId: string;
  state: SessionState;
  turnId: string;
  onRetry?: () => void;
}) {
  const t = state.turns[turnId];
  if (!t) return null;
  const u = t.usage;
  const reason = t.stopReason && t.stopReason !== t.status ? ` (${t.stopReason})` : "";
  const status = t.status === "completed" ? "" : `${t.status}${reason} · `;
  return (
    <div className={styles.usage} data-testid="turn-usage">
      {status}
      {u ? tokensText(u) : "no usage reported"}
      {u && <TurnCost sessionId={sessionId} state={state} turnId={turnId} />}
      {onRetry && RETRYABLE.has(t.status) && t.stopReason !== "provider_not_configured" && (
        <button className={styles.retry} onClick={onRetry} title="Send the same message again" data-testid="retry-turn">
          Retry
        </button>
      )}
    </div>
  );
}

function NoProvider({ message }: { message: string }) {
  return (
    <div className={styles.help} data-testid="configure-model">
      <strong>No model is configured yet.</strong>
      <p>{message}</p>
      <pre>
        {
          "ANTHROPIC_API_KEY=sk-ant-… npm start\n# or an OpenAI-compatible server:\nOPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_API_KEY=x QUIVER_PROVIDER=openai QUIVER_MODEL=llama3.1 npm start"
        }
      </pre>
    </div>
  );
}

interface ChatPaneProps {
  sessionId: string;
  state: SessionState;
  /** The server took the message (and may have named the session after it). */
  onSent?(): void;
  /** Opens a file a tool card names; `knownPaths` are the workspace's files, as the tree names them. */
  onOpenFile?(target: FileTarget): void;
  knownPaths?: readonly string[];
  /** Reads the turns before the loaded ones (state.earlier: a long session opens at its latest). */
  onLoadEarlier?(): Promise<void>;
  /** Shows the agent's changes of a turn for review. */
  onReview?(turnId: string): void;
}

export function ChatPane({
  sessionId,
  state,
  onSent,
  onOpenFile,
  knownPaths = [],
  onLoadEarlier,
  onReview,
}: ChatPaneProps) {
  const api = useSessionApi();
  const readOnly = useReadOnly();
  const [draft, setDraft] = useState("");
  const [spill, setSpill] = useState<{ ref: string; title: string }>();
  const [shown, setShown] = useState(CHAT_WINDOW);
  const [earlier, setEarlier] = useState<{ loading: boolean; error?: string }>({ loading: false });
  const from = Math.max(0, state.items.length - shown);
  const log = useRef<HTMLDivElement>(null);
  const composer = useRef<HTMLTextAreaElement>(null);
  const mentions = useMentions(draft, setDraft, knownPaths, () => composer.current);
  const attached = useDraftImages();
  const stick = useRef(true);
  const running = state.activeTurnId !== null;
  const pending = pendingApprovals(state);
  const cycleMode = useRef<() => void>(undefined);
  const rewind = useRewind(sessionId, (text) => {
    setDraft(text);
    composer.current?.focus();
  });
  const rewound = useMemo(() => rewoundTurns(state.checkpoints), [state.checkpoints]);
  // The turn each item belongs to: its message's, until the next message.
  const turnOf = useMemo(() => {
    let turn: string | undefined;
    return state.items.map((i) => (i.kind === "user" ? (turn = i.turnId) : turn));
  }, [state.items]);

  useEffect(() => {
    const el = log.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [state]);

  // Earlier turns put in front keep the reader where they were (at the top of the log the
  // browser's own scroll anchoring does not): the same distance from the bottom, once they show.
  const keepPlace = useRef<{ fromBottom: number; items: number } | null>(null);
  useLayoutEffect(() => {
    const el = log.current;
    const keep = keepPlace.current;
    if (!el || !keep || state.items.length === keep.items || from > 0) return;
    el.scrollTop = el.scrollHeight - keep.fromBottom;
    keepPlace.current = null;
  }, [state.items.length, from]);

  // Enter sends, or queues while a turn runs or is about to (use-send.ts).
  const {
    busy,
    error: sendError,
    canSend,
    submit,
    resend,
    queue,
  } = useSend({
    sessionId,
    state,
    draft,
    setDraft,
    attached,
    onSent,
  });
  // Retry is offered on the last turn only, and sends the message that started it.
  const lastUser = state.items.findLast((i) => i.kind === "user");
  const lastEnd = state.items.findLast((i) => i.kind === "turn-end");
  // The same images again by id: they are in the session already.
  const retry =
    !readOnly && !busy && lastUser?.kind === "user"
      ? () =>
          resend(
            lastUser.text,
            lastUser.images?.map((i) => ({ attachmentId: i.id })),
          )
      : undefined;

  const render = (item: ChatItem) => {
    switch (item.kind) {
      case "user": {
        const bubble = (
          <div key={item.key} className={styles.user} data-testid="msg-user">
            {item.images && <MessageImages sessionId={sessionId} images={item.images} />}
            {item.text}
          </div>
        );
        if (readOnly || !item.turnId) return bubble;
        const turnId = item.turnId;
        return (
          <div key={item.key} className={rewindStyles.userRow}>
            {rewound.has(turnId) && (
              <span className={rewindStyles.rewoundLabel} title="Rewound: the agent no longer sees this turn">
                Rewound
              </span>
            )}
            <TurnMenu running={running} onChoose={(kind) => rewind.open(turnId, kind)} />
            {bubble}
          </div>
        );
      }
      case "text":
        return (
          <div key={item.key} className={styles.assistant} data-testid="msg-assistant">
            <Markdown text={item.text} />
          </div>
        );
      case "reasoning":
        return (
          <details key={item.key} className={styles.reasoning} data-testid="msg-reasoning">
            <summary>Reasoning</summary>
            <div>{item.text}</div>
          </details>
        );
      case "tool": {
        const card = state.tools[item.callId];
        // ask_user's call shows as its question card (agent-ui-state.ts), open or answered.
        const question = state.agent.questions[item.callId];
        if (question)
          return (
            <QuestionCard
              key={item.key}
              card={question}
              onAnswer={(a) => api.answerQuestion(sessionId, item.callId, a)}
            />
          );
        const approval = card.approvalId ? state.approvals[card.approvalId] : undefined;
        const target = onOpenFile && toolFileTarget(card, knownPaths);
        // exit_plan_mode asks with its own card: the plan, accept in a mode, or keep planning.
        if (card.name === "exit_plan_mode" && approval && !approval.decision && !readOnly) {
          const plan = (card.input as { plan?: unknown } | null)?.plan;
          return (
            <div key={item.key}>
              <ToolCardView card={card} onAnswer={() => Promise.resolve()} onViewSpill={() => undefined} />
              <PlanCard
                sessionId={sessionId}
                approvalId={approval.approvalId}
                plan={typeof plan === "string" ? plan : card.summary}
                onKeepPlanning={(message) => api.answer(sessionId, approval.approvalId, "reject", message)}
              />
            </div>
          );
        }
        return (
          <WithSubagent
            key={item.key}
            card={card}
            tools={state.tools}
            onViewSpill={(ref, title) => setSpill({ ref, title })}
          >
            <ToolCardView
              card={card}
              approval={approval}
              onAnswer={(approvalId, choice, message) => api.answer(sessionId, approvalId, choice, message)}
              onViewSpill={(ref, title) => setSpill({ ref, title })}
              onOpenFile={target ? () => onOpenFile(target) : undefined}
            />
          </WithSubagent>
        );
      }
      case "notice":
        return (
          <div
            key={item.key}
            className={`${styles.notice} ${item.level === "warn" ? styles.noticeWarn : ""}`}
            data-testid="notice"
          >
            {item.text}
          </div>
        );
      case "error":
        return item.code === "provider_not_configured" ? (
          <NoProvider key={item.key} message={item.message} />
        ) : (
          <div key={item.key} className={styles.error} data-testid="chat-error">
            {item.message}
          </div>
        );
      case "compacted":
        return (
          <details key={item.key} className={styles.compacted} data-testid="compacted">
            <summary>
              Earlier conversation summarized to fit the model&apos;s context ({item.messages} messages,{" "}
              {item.tokens.toLocaleString("en")} tokens)
            </summary>
            <Markdown text={item.summary} />
          </details>
        );
      case "turn-end": {
        const turnId = item.turnId;
        const changed = state.checkpoints.changed[turnId] ?? 0;
        const usage = (
          <Usage
            key={item.key}
            sessionId={sessionId}
            state={state}
            turnId={turnId}
            onRetry={item === lastEnd ? retry : undefined}
          />
        );
        if (changed === 0 || readOnly) return usage;
        return (
          <div key={item.key}>
            {usage}
            <TurnLinks
              files={changed}
              running={running}
              onReview={onReview && (() => onReview(turnId))}
              onUndo={() => rewind.open(turnId, "files")}
            />
          </div>
        );
      }
    }
  };

  return (
    <div className={`${styles.pane} ${attached.dropping ? styles.dropping : ""}`} {...(readOnly ? {} : attached.drop)}>
      <div
        className={styles.log}
        ref={log}
        data-testid="chat-log"
        onScroll={(e) => {
          const el = e.currentTarget;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        {state.items.length === 0 && (
          <div className="muted">Ask the agent to read, change or run something in this workspace.</div>
        )}
        {from > 0 && (
          <button className={styles.earlier} onClick={() => setShown(shown + CHAT_WINDOW)} data-testid="chat-earlier">
            Show earlier ({from.toLocaleString("en")} more)
          </button>
        )}
        {from === 0 && state.earlier && onLoadEarlier && (
          <button
            className={styles.earlier}
            disabled={earlier.loading}
            data-testid="chat-earlier"
            onClick={() => {
              const el = log.current;
              if (el) keepPlace.current = { fromBottom: el.scrollHeight - el.scrollTop, items: state.items.length };
              setEarlier({ loading: true });
              onLoadEarlier().then(
                () => {
                  setEarlier({ loading: false });
                  setShown(state.items.length + CHAT_WINDOW);
                },
                (err: Error) => {
                  keepPlace.current = null;
                  setEarlier({ loading: false, error: err.message });
                },
              );
            }}
          >
            {earlier.loading
              ? "Loading earlier turns…"
              : `Show earlier (${state.earlier.turns.toLocaleString("en")} more ${state.earlier.turns === 1 ? "turn" : "turns"})`}
            {earlier.error && <span className={styles.error}> {earlier.error}</span>}
          </button>
        )}
        {state.items.slice(from).map((item, i) => {
          const turn = turnOf[from + i];
          if (!turn || !rewound.has(turn)) return render(item);
          return (
            <div key={item.key} className={rewindStyles.rewound} data-rewound="true">
              {render(item)}
            </div>
          );
        })}
      </div>
      {state.agent.todos && <TodoList todos={state.agent.todos} />}
      <ChatAnnouncer state={state} />
      {!readOnly && <ApprovalNotice pending={pending} />}
      {!readOnly && rewind.ui}
      {sendError && <div className={styles.error}>{sendError}</div>}
      {!readOnly && <QueuedMessages queue={queue} running={busy} />}
      {!readOnly && (
        <div className={styles.composer}>
          {mentions.list}
          {(attached.images.length > 0 || attached.error) && (
            <div className={styles.attached}>
              <DraftThumbs images={attached.images} onRemove={attached.remove} />
              {attached.error && (
                <div className={styles.attachError} role="alert" data-testid="attach-error">
                  {attached.error}
                </div>
              )}
            </div>
          )}
          <textarea
            ref={composer}
            value={draft}
            placeholder={
              running
                ? "The agent is working… Enter queues a message, Esc stops it"
                : "Message the agent: Enter sends, Shift+Enter a new line, @ names a file"
            }
            onChange={(e) => {
              setDraft(e.target.value);
              mentions.track(e.target);
            }}
            onSelect={(e) => mentions.track(e.currentTarget)}
            onPaste={attached.onPaste}
            onKeyDown={(e) => {
              if (e.nativeEvent.isComposing) return;
              if (e.key === "Tab" && e.shiftKey) {
                // As in Claude Code: Shift+Tab cycles the session's mode.
                e.preventDefault();
                cycleMode.current?.();
                return;
              }
              if (mentions.onKeyDown(e)) return;
              if (e.key === "Enter" && !e.shiftKey) {
                e.preventDefault();
                submit();
              } else if (e.key === "ArrowUp" && draft === "") {
                // As in a shell: the last message back, to send again or change.
                const last = state.items.findLast((i) => i.kind === "user");
                if (last?.kind === "user") {
                  e.preventDefault();
                  setDraft(last.text);
                }
              }
            }}
            aria-label="Message to the agent"
            data-testid="composer"
          />
          {/* The paperclip above Send, so the message box keeps its width (and its placeholder whole). */}
          <div className={styles.composerButtons}>
            <ModeChip sessionId={sessionId} fromEvents={state.mode} cycle={cycleMode} />
            <AttachButton onFiles={attached.add} />
            {running ? (
              <button className={styles.stop} onClick={() => void api.cancel(sessionId)} data-testid="stop">
                Stop
              </button>
            ) : (
              <button onClick={submit} disabled={!canSend} data-testid="send">
                Send
              </button>
            )}
          </div>
        </div>
      )}
      {!readOnly && (
        <ModelPicker sessionId={sessionId}>
          <ContextMeter context={state.context} onCompact={busy ? undefined : () => resend("/compact")} />
        </ModelPicker>
      )}
      {spill && (
        <SpillViewer
          sessionId={sessionId}
          spillRef={spill.ref}
          title={spill.title}
          onClose={() => setSpill(undefined)}
        />
      )}
    </div>
  );
}
