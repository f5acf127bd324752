"use client";
// What every pane of a frame may read without being handed it: whether the page is read-only,
// the runner's sandbox, and the frame's IDE bus (panes listen on it and send their own commands).
import type { ReactNode } from "react";
import { ReadOnlyContext } from "../../_lib/read-only";
import { SandboxStatusContext, type SandboxStatus } from "../../_lib/sandbox-status";
import { IdeBusProvider, type IdeBus } from "../../_lib/ide-bus";

interface Props {
  readOnly: boolean;
  sandbox: SandboxStatus | undefined;
  bus: IdeBus;
  children: ReactNode;
}

export function FrameContext({ readOnly, sandbox, bus, children }: Props) {
  return (
    <ReadOnlyContext.Provider value={readOnly}>
      <SandboxStatusContext.Provider value={sandbox}>
        <IdeBusProvider value={bus}>{children}</IdeBusProvider>
      </SandboxStatusContext.Provider>
    </ReadOnlyContext.Provider>
  );
}
