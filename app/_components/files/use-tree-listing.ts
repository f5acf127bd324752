"use client";
// The file tree's data: the workspace as the runner lists it (breadth first, up to a cap) and,
// when that listing was cut short, the root and each folder the tree shows open read on their
// own (listing.ts), so every folder of a large workspace can be browsed, as VS Code's explorer
// reads folders as they open. One refresh renews all of it when files change.
import { useCallback, useMemo, useState } from "react";
import { useQueries, useQuery, useQueryClient, type UseQueryResult } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import type { TreeEntry } from "../../../server/protocol/ide-types";
import { mergeListings } from "./listing";

type Listing = { entries: TreeEntry[]; truncated: boolean };

// Stable, so useQueries hands back the same array until a read changes.
const dataOf = (results: Pick<UseQueryResult<Listing, unknown>, "data">[]) => results.map((r) => r.data);

export function useTreeListing(sessionId: string, enabled: boolean) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const whole = useQuery(trpc.files.tree.queryOptions({ sessionId }, { retry: 1, enabled }));
  const [opened, setOpened] = useState<string[]>([]);
  const partial = whole.data?.truncated ?? false;
  const folders = useMemo(() => (partial ? ["", ...opened] : []), [partial, opened]);
  const reads = useQueries({
    queries: folders.map((folder) =>
      trpc.files.tree.queryOptions({ sessionId, folder: folder || "." }, { retry: 0, enabled }),
    ),
    combine: dataOf,
  });
  const entries = useMemo(() => {
    if (!whole.data) return undefined;
    const read = folders.flatMap((folder, i) => (reads[i] ? [{ folder, entries: reads[i].entries }] : []));
    return mergeListings(whole.data.entries, read);
  }, [whole.data, folders, reads]);
  /** Folders whose own read was cut too (more entries in one folder than the cap). */
  const cut = useMemo(() => (partial ? folders.filter((_, i) => reads[i]?.truncated) : []), [partial, folders, reads]);
  /** The folders the tree shows open: each is read on its own while it is (a closed one is not
   *  read again when files change). */
  const opening = useCallback(
    (shown: readonly string[]) =>
      setOpened((o) => (o.length === shown.length && o.every((f, i) => f === shown[i]) ? o : [...shown])),
    [],
  );
  const refresh = useCallback(
    () => queryClient.invalidateQueries({ queryKey: trpc.files.tree.queryKey({ sessionId }) }),
    [queryClient, trpc, sessionId],
  );
  return { entries, cut, partial, opening, refresh, isPending: whole.isPending, error: whole.error };
}
