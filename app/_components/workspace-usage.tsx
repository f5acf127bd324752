"use client";
// The session's workspace disk usage in the IDE's status bar (files.usage): read when the IDE
// opens, again after the workspace's files change (the event's version) and every 30 s, since a
// command can fill the disk without a file event for each write. Nothing is shown when the
// workspace has no limit or its runner is away.
import { useEffect } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../_lib/trpc";
import { DiskUsage } from "./disk-usage";

export function WorkspaceUsage({ sessionId, version }: { sessionId: string; version?: number }) {
  const trpc = useTRPC();
  const usage = useQuery(
    trpc.files.usage.queryOptions({ sessionId }, { refetchInterval: 30_000, retry: false, staleTime: 2_000 }),
  );
  const { refetch } = usage;
  useEffect(() => {
    if (version !== undefined) void refetch();
  }, [version, refetch]);
  const data = usage.data;
  if (!data || data.limitBytes === null) return null;
  return <DiskUsage usedBytes={data.usedBytes} limitBytes={data.limitBytes} />;
}
