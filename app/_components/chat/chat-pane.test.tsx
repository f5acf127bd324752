// The chat pane rendered on the server from replayed events: what a person sees for a session
// with no model configured, a pending approval, a truncated result, a message's images.
import { describe, expect, it, vi } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { SessionEvent, SessionEventBody } from "../../../server/protocol/events";
import { applyEvents, emptySessionState } from "../../_lib/session-state";

vi.mock("../../_lib/session-api", () => ({ useSessionApi: () => ({}) }));
// The model picker reads the server through react-query (its model is tested in _lib/model-choice).
vi.mock("./model-picker", () => ({ ModelPicker: () => null }));
vi.mock("./mode-chip", () => ({ ModeChip: () => null, PlanCard: () => null }));
vi.mock("next/dynamic", () => ({ default: () => () => null }));
// Attached images are read by attachments.read; here only what the query cache holds shows.
vi.mock("../../_lib/trpc", () => ({
  useTRPC: () => ({
    attachments: {
      read: {
        queryOptions: (input: object, opts: object) => ({
          queryKey: ["attachments.read", input],
          queryFn: () => new Promise(() => {}),
          ...opts,
        }),
      },
    },
  }),
  // The rewind's calls (checkpoints-api) are made only on a click.
  useTRPCClient: () => ({}),
}));
const { ChatPane } = await import("./chat-pane");

const state = (bodies: SessionEventBody[]) =>
  applyEvents(
    emptySessionState(),
    bodies.map((b, i) => ({ ...b, seq: i + 1, sessionId: "s", at: new Date(0).toISOString() }) as SessionEvent),
  );

describe("chat pane", () => {
  it("shows how to configure a model instead of an error", () => {
    const html = renderToStaticMarkup(
      <ChatPane
        sessionId="s"
        state={state([
          { type: "message.user", messageId: "m", text: "hi" },
          { type: "turn.started", turnId: "t" },
          {
            type: "error",
            turnId: "t",
            code: "provider_not_configured",
            message: "No model provider is configured. Set ANTHROPIC_API_KEY…",
          },
          { type: "turn.finished", turnId: "t", status: "failed", stopReason: "provider_not_configured" },
        ])}
      />,
    );
    expect(html).toContain('data-testid="configure-model"');
    expect(html).toContain("ANTHROPIC_API_KEY");
    expect(html).not.toContain('data-testid="chat-error"');
  });

  it("renders a pending approval with its exact command and a truncated result with View full output", () => {
    const html = renderToStaticMarkup(
      <ChatPane
        sessionId="s"
        state={state([
          { type: "turn.started", turnId: "t" },
          {
            type: "tool.started",
            turnId: "t",
            callId: "c1",
            name: "shell",
            input: { command: "make all" },
            summary: "$ make all",
          },
          {
            type: "approval.required",
            approvalId: "a",
            callId: "c1",
            request: {
              tool: "shell",
              summary: "make all",
              command: "make all",
              reason: "Runs a command in your workspace.",
            },
          },
          {
            type: "tool.started",
            turnId: "t",
            callId: "c2",
            name: "shell",
            input: { command: "seq 1 99999" },
            summary: "$ seq 1 99999",
          },
          {
            type: "tool.finished",
            callId: "c2",
            status: "succeeded",
            output: "1\n2\n[… cut …]",
            isError: false,
            truncated: true,
            spillRef: `sp_${"a".repeat(32)}`,
            durationMs: 12,
          },
        ])}
      />,
    );
    expect(html).toContain('data-state="pending"');
    expect(html).toContain('data-testid="approval-command">make all</pre>');
    expect(html).toContain("Approve for this session");
    expect(html).toContain('data-testid="view-full-output"');
    expect(html).toContain('data-testid="stop"');
  });

  it("offers Retry on the last turn only, when it failed, was cut or stopped", () => {
    const turn = (id: string, text: string, status: "failed" | "completed" | "cancelled"): SessionEventBody[] => [
      { type: "message.user", messageId: `m${id}`, text },
      { type: "turn.started", turnId: id },
      { type: "turn.finished", turnId: id, status, ...(status === "failed" ? { stopReason: "provider_error" } : {}) },
    ];
    const retries = (bodies: SessionEventBody[]) =>
      renderToStaticMarkup(<ChatPane sessionId="s" state={state(bodies)} />).split('data-testid="retry-turn"').length -
      1;
    expect(retries([...turn("a", "one", "failed"), ...turn("b", "two", "failed")])).toBe(1);
    expect(retries([...turn("a", "one", "failed"), ...turn("b", "two", "completed")])).toBe(0);
    expect(retries(turn("a", "one", "cancelled"))).toBe(1);
  });

  it("shows the latest part of a long session's log, with the rest a click away", async () => {
    const { CHAT_WINDOW } = await import("./chat-pane");
    const bodies: SessionEventBody[] = [];
    for (let i = 0; i < 150; i++) {
      bodies.push(
        { type: "message.user", messageId: `m${i}`, text: `message ${i}` },
        { type: "turn.started", turnId: `t${i}` },
      );
      bodies.push(
        { type: "text.delta", turnId: `t${i}`, text: `answer ${i}` },
        { type: "turn.finished", turnId: `t${i}`, status: "completed" },
      );
    }
    const html = renderToStaticMarkup(<ChatPane sessionId="s" state={state(bodies)} />);
    // 450 items: the last CHAT_WINDOW of them, from a turn's end on.
    expect(html.split('data-testid="msg-user"').length - 1).toBe((CHAT_WINDOW / 3) | 0);
    expect(html).toContain("Show earlier (250 more)");
    expect(html).toContain("message 149");
    expect(html).not.toContain("message 83<");
    const short = renderToStaticMarkup(<ChatPane sessionId="s" state={state(bodies.slice(0, 40))} />);
    expect(short).not.toContain('data-testid="chat-earlier"');
  });

  it("shows a message's images in its bubble, with or without text, and the composer's paperclip", () => {
    const client = new QueryClient();
    client.setQueryData(["attachments.read", { sessionId: "s", id: "att_1" }], {
      id: "att_1",
      mediaType: "image/png",
      bytes: 70,
      base64: "iVBORw0KGgo=",
    });
    const html = renderToStaticMarkup(
      <QueryClientProvider client={client}>
        <ChatPane
          sessionId="s"
          state={state([
            {
              type: "message.user",
              messageId: "m1",
              text: "look at this",
              images: [
                { id: "att_1", mediaType: "image/png", bytes: 70 },
                { id: "att_2", mediaType: "image/webp", bytes: 2048 },
              ],
            },
            {
              type: "message.user",
              messageId: "m2",
              text: "",
              images: [{ id: "att_1", mediaType: "image/png", bytes: 70 }],
            },
            { type: "message.user", messageId: "m3", text: "plain" },
          ])}
        />
      </QueryClientProvider>,
    );
    const bubbles = html.split('data-testid="msg-user"').slice(1);
    expect(bubbles).toHaveLength(3);
    expect(bubbles[0]).toContain('src="data:image/png;base64,iVBORw0KGgo="');
    expect(bubbles[0]).toContain('title="PNG image · 70 B"');
    // Not read yet: a placeholder that cannot be opened.
    expect(bubbles[0]).toMatch(/title="WEBP image · 2.0 KB" disabled="" data-testid="msg-image" data-state="loading"/);
    expect(bubbles[0]).toContain("look at this</div>");
    expect(bubbles[1].split('data-testid="msg-image"')).toHaveLength(2);
    expect(bubbles[2]).not.toContain("msg-images");
    expect(html).toContain('accept="image/png,image/jpeg,image/gif,image/webp"');
    expect(html).toContain('data-testid="attach"');
  });

  it("marks a rewound turn (dimmed, labelled) and offers a turn that changed files its review and undo", () => {
    const turn = (n: number, files: number): Array<Record<string, unknown>> => [
      { type: "turn.started", turnId: `t${n}` },
      { type: "message.user", messageId: `m${n}`, text: `change ${n}` },
      { type: "text.delta", turnId: `t${n}`, text: `did ${n}` },
      { type: "checkpoint.created", checkpointId: `a${n}`, turnId: `t${n}`, phase: "after", filesChanged: files },
      { type: "turn.finished", turnId: `t${n}`, status: "completed" },
    ];
    const bodies = [
      ...turn(1, 2),
      ...turn(2, 0),
      { type: "turn.rewound", rewindId: "r", turnIds: ["t2"] },
    ] as unknown as SessionEventBody[];
    const html = renderToStaticMarkup(<ChatPane sessionId="s" state={state(bodies)} onReview={() => {}} />);
    expect(html.split('data-testid="turn-menu"')).toHaveLength(3);
    const [before, after] = html.split('data-rewound="true"');
    expect(before).toContain("did 1");
    expect(before).not.toContain("Rewound</span>");
    expect(after).toContain("Rewound</span>");
    expect(after).toContain("change 2");
    // Every item of turn 2 (message, answer, its end) is marked, none of turn 1.
    expect(html.split('data-rewound="true"')).toHaveLength(4);
    expect(html.split('data-testid="turn-review"')).toHaveLength(2);
    expect(before).toContain("2 files changed");
    expect(html.split('data-testid="turn-undo"')).toHaveLength(2);
  });
});
