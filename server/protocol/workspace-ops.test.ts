// The workspace id is the only thing that names a folder under a runner's root: hostile ids
// must fail the schema of every frame that carries one, and frames without one stay valid.
import { describe, expect, it } from "vitest";
import { ServerToRunner } from "./runner";
import { WorkspaceCreateInput, WorkspaceId } from "./workspace-ops";

const HOSTILE = ["", "..", ".", "../a", "a/b", "/abs", "-a", "A", "a.b", "a\nb", "a b", "a\0", "x".repeat(65), "ä"];

describe("workspace ids", () => {
  it("refuses hostile ids and accepts plain ones", () => {
    for (const id of HOSTILE) expect(WorkspaceId.safeParse(id).success, JSON.stringify(id)).toBe(false);
    for (const id of ["a", "0", "proj-1-alice", "x".repeat(64)]) expect(WorkspaceId.safeParse(id).success).toBe(true);
  });

  it("refuses them on request, pty.open and preview frames; absent is still valid", () => {
    const request = { type: "request", id: "1", sessionId: "s", op: "read_file", input: {}, deadline: 1 };
    const pty = { type: "pty.open", ptyId: "p", sessionId: "s", cols: 80, rows: 24 };
    const preview = {
      type: "preview.request",
      streamId: "x",
      sessionId: "s",
      port: 80,
      method: "GET",
      path: "/",
      headers: [],
      hasBody: false,
      deadline: 1,
    };
    for (const frame of [request, pty, preview]) {
      expect(ServerToRunner.safeParse(frame).success).toBe(true);
      expect(ServerToRunner.safeParse({ ...frame, workspaceId: "ok-1" }).success).toBe(true);
      for (const id of HOSTILE) expect(ServerToRunner.safeParse({ ...frame, workspaceId: id }).success).toBe(false);
    }
  });

  it("workspace.create takes a known source kind only", () => {
    expect(WorkspaceCreateInput.safeParse({ workspaceId: "a", source: { kind: "empty" } }).success).toBe(true);
    expect(
      WorkspaceCreateInput.safeParse({ workspaceId: "a", source: { kind: "git", url: "https://x/y.git" } }).success,
    ).toBe(true);
    expect(WorkspaceCreateInput.safeParse({ workspaceId: "a", source: { kind: "copy", from: "/" } }).success).toBe(
      false,
    );
    expect(WorkspaceCreateInput.safeParse({ workspaceId: "..", source: { kind: "empty" } }).success).toBe(false);
  });
});
