"use client";
// The session an IDE frame shows, as the server tells it: the session itself, who is looking
// (a member, or a share link's viewer, read-only), its event stream, and the runner its workspace
// is placed on with that runner's sandbox. Also what follows from them outside the panes: the
// browser tab's title and the socket closed for good once a share link has ended.
import { useCallback, useEffect, useMemo } from "react";
import { useQuery } from "@tanstack/react-query";
import { closeEventSocket, useEventSocketState, useTRPC } from "../../_lib/trpc";
import type { SandboxStatus } from "../../_lib/sandbox-status";
import { useSessionApi } from "../../_lib/session-api";
import { useSessionEvents } from "../../_lib/use-session-events";
import { pendingApprovals } from "../../_lib/session-state";
import { isShareView } from "../share/share-view";

export function useSessionFrame(sessionId: string) {
  const trpc = useTRPC();
  const api = useSessionApi();
  const session = useQuery(trpc.sessions.get.queryOptions({ id: sessionId }, { retry: false }));
  const who = useQuery(trpc.auth.whoami.queryOptions(undefined, { staleTime: Infinity }));
  const kind = who.data?.kind;
  const readOnly = kind !== "member";
  const { state, status, error: streamError, loadEarlier } = useSessionEvents(sessionId);
  const linkEnded = status === "ended";
  // Refused for good (the share link ended): the socket would only knock on a closed door, and
  // the runner's health is no longer this page's business.
  useEffect(() => {
    if (linkEnded) closeEventSocket();
  }, [linkEnded]);
  const health = useQuery(trpc.health.get.queryOptions(undefined, { refetchInterval: linkEnded ? false : 2_000 }));
  // The runner this session's workspace is placed on (server/services/placement.ts); its facts
  // come from health, and when it is gone the banner names it and since when.
  const place = useQuery(
    trpc.projects.workspaceOf.queryOptions({ sessionId }, { refetchInterval: linkEnded ? false : 5_000, retry: false }),
  );
  const placedOn = place.data?.runner?.id;
  const runner = health.data?.runners.find((r) => r.connected && (!placedOn || r.id === placedOn));
  const sandboxed = runner?.sandboxed;
  const { reason: sandboxReason, network, networkReason } = runner?.sandbox ?? {};
  const sandboxStatus = useMemo<SandboxStatus | undefined>(
    () => (sandboxed === undefined ? undefined : { sandboxed, reason: sandboxReason, network, networkReason }),
    [sandboxed, sandboxReason, network, networkReason],
  );
  const socket = useEventSocketState();

  // The runner coming or going reaches the session as an event at once; health (polled every
  // 2 s, and the truth after a server restart) is asked again right then, so the banner does
  // not wait for the next poll.
  const runnerEvent = state.runner;
  const refetchHealth = health.refetch;
  const refetchPlace = place.refetch;
  useEffect(() => {
    if (runnerEvent) void refetchHealth().then(() => refetchPlace());
  }, [runnerEvent, refetchHealth, refetchPlace]);

  const running = state.activeTurnId !== null;
  // The browser tab says when the agent waits for the person (an approval) or is working, so a
  // person in another tab sees it; and which session this is.
  const waiting = pendingApprovals(state).length;
  const title = session.data?.title;
  useEffect(() => {
    const mark = waiting > 0 ? `(${waiting}) ` : running ? "● " : "";
    document.title = `${mark}${title ?? "Session"} · Quiver`;
  }, [waiting, running, title]);
  useEffect(() => () => void (document.title = "Quiver"), []);
  // A new session is named by its first message (services/sessions): read the title again once sent.
  const refetchSession = session.refetch;
  const onSent = useCallback(() => void refetchSession(), [refetchSession]);
  const cancel = useCallback(() => void api.cancel(sessionId).catch(() => {}), [api, sessionId]);
  const compact = useCallback(() => void api.send(sessionId, "/compact").catch(() => {}), [api, sessionId]);

  return {
    state,
    status,
    streamError,
    loadEarlier,
    /** Why the session cannot be shown (not found, not yours). */
    sessionError: session.error,
    title,
    kind,
    readOnly,
    /** Whose layout to remember: a member's id, else the kind of visitor (undefined until known). */
    person: who.data ? (who.data.kind === "member" ? who.data.userId : who.data.kind) : undefined,
    // Until the server says who this is, the keys act unless the page is a share view: a member's
    // first keys after a load must not be lost (the server still decides what anyone may do).
    keysReadOnly: who.data ? readOnly : isShareView(),
    viewer: kind === "viewer" || (!who.data && isShareView()),
    linkEnded,
    health,
    runner,
    goneRunner: place.data?.runner && !place.data.runner.connected ? place.data.runner : undefined,
    sandboxStatus,
    socket,
    running,
    onSent,
    cancel,
    compact,
  };
}

export type SessionFrame = ReturnType<typeof useSessionFrame>;
