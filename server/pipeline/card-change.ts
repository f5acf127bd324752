// The whole of a change too long for its approval card, kept where the card's "show the whole
// change" reads it: a spill of the session (spills.read pages it, redacted for a share-link
// viewer). A person is asked about every character the call would write, not the first 20,000.
// When the spill is refused (the session's stored outputs are at their bound, a low disk) the card
// still asks, clipped, and says the rest could not be kept.
import { SpillRefused, type SpillStore } from "../services/spills";
import type { Logger } from "./contract";
import { MAX_DIFF } from "./card";

export interface KeptChange {
  diffRef?: string;
  /** Why the whole change could not be kept, for the card. */
  note?: string;
}

export async function keepWholeChange(
  whole: string | undefined,
  at: { sessionId: string; toolCallId: string; spills: SpillStore; log: Logger },
): Promise<KeptChange> {
  if (whole === undefined || whole.length <= MAX_DIFF) return {};
  try {
    const stored = await at.spills.store({
      sessionId: at.sessionId,
      toolCallId: at.toolCallId,
      bytes: Buffer.from(whole, "utf8"),
    });
    return { diffRef: stored.ref };
  } catch (e) {
    if (!(e instanceof SpillRefused)) at.log.error(`the whole change of tool call ${at.toolCallId} was not kept`, e);
    const why =
      e instanceof SpillRefused
        ? e.reason === "disk"
          ? "the server's disk is low"
          : "this session's stored outputs are at their limit"
        : "storing it failed";
    return {
      note: `Only the first ${MAX_DIFF.toLocaleString("en")} characters of this change are shown and the rest could not be kept (${why}): reject it unless you know what the rest is.`,
    };
  }
}
