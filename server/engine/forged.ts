// Forged-call stripping: tool calls a model writes into its text (XML, [TOOL_CALL], <tool_call>
// JSON, markdown pseudo-calls, leaked special tokens) are protocol drift. They are cut out of
// the streamed text before anyone sees or stores them, and only counted so the engine can say
// so. Text that might be the start of such a region is held back until it resolves, so nothing
// appears and then vanishes.

interface Region {
  open: string;
  /** Closing marker; undefined: the region runs to the end of the response. */
  close?: string;
}

export const regions: Region[] = [
  { open: "<function_calls>", close: "</function_calls>" },
  { open: "<invoke ", close: "</invoke>" },
  { open: "<invoke>", close: "</invoke>" },
  { open: "<tool_call>", close: "</tool_call>" },
  { open: "<tool_use>", close: "</tool_use>" },
  { open: "<function=", close: "</function>" },
  { open: "[TOOL_CALL]", close: "[/TOOL_CALL]" },
  { open: "[TOOL_CALLS]" },
  { open: "<|tool_calls_section_begin|>", close: "<|tool_calls_section_end|>" },
  { open: "<|tool_call_begin|>", close: "<|tool_call_end|>" },
  { open: "<｜tool▁calls▁begin｜>", close: "<｜tool▁calls▁end｜>" },
  { open: "<｜tool▁call▁begin｜>", close: "<｜tool▁call▁end｜>" },
  { open: "<|python_tag|>" },
  { open: "```tool_call", close: "```" },
  { open: "```tool_code", close: "```" },
  { open: "```tool_use", close: "```" },
  { open: "```function_call", close: "```" },
];

/** A lone leaked special token (`<|im_end|>`, `<｜end▁of▁sentence｜>`) is dropped by itself. */
const specialToken = /<[|｜][A-Za-z0-9_▁]{1,40}[|｜]>/;
const specialPrefix = /<[|｜][A-Za-z0-9_▁]{0,40}[|｜]?$/;
const longestOpen = Math.max(...regions.map((r) => r.open.length));
/** Every opener and special token starts with one of these: text with none of them is plain
 *  (most tokens), and skips the search. */
export const OPENER_STARTS = /[<[`]/;

export interface FilterOutput {
  /** Text that is safe to show and store now. */
  text: string;
  /** Regions or tokens removed by this call. */
  stripped: number;
}

export class ForgedCallFilter {
  private pending = "";
  private inside: Region | undefined;
  /** Total removed over the filter's life. */
  strippedTotal = 0;

  push(chunk: string): FilterOutput {
    this.pending += chunk;
    return this.drain(false);
  }

  /** End of the response: an unterminated region is dropped, a harmless held prefix released. */
  flush(): FilterOutput {
    return this.drain(true);
  }

  private drain(final: boolean): FilterOutput {
    let out = "";
    let stripped = 0;
    for (;;) {
      if (this.inside) {
        const close = this.inside.close;
        const at = close === undefined ? -1 : this.pending.indexOf(close);
        if (at < 0) {
          if (final) {
            this.pending = "";
            this.inside = undefined;
          } else if (close !== undefined) {
            // Keep just enough to see a closer split across chunks.
            this.pending = this.pending.slice(Math.max(0, this.pending.length - close.length + 1));
          } else {
            this.pending = "";
          }
          break;
        }
        this.pending = this.pending.slice(at + close!.length);
        this.inside = undefined;
        continue;
      }
      if (!OPENER_STARTS.test(this.pending)) {
        out += this.pending;
        this.pending = "";
        break;
      }
      const hit = this.findOpen();
      if (hit) {
        out += this.pending.slice(0, hit.at);
        stripped++;
        if (hit.token !== undefined) {
          this.pending = this.pending.slice(hit.at + hit.token.length);
        } else {
          this.pending = this.pending.slice(hit.at + hit.region!.open.length);
          this.inside = hit.region;
        }
        continue;
      }
      const hold = final ? 0 : this.suspiciousSuffix();
      out += this.pending.slice(0, this.pending.length - hold);
      this.pending = this.pending.slice(this.pending.length - hold);
      break;
    }
    this.strippedTotal += stripped;
    return { text: out, stripped };
  }

  private findOpen(): { at: number; region?: Region; token?: string } | undefined {
    let best: { at: number; region?: Region; token?: string } | undefined;
    for (const region of regions) {
      const at = this.pending.indexOf(region.open);
      if (at >= 0 && (!best || at < best.at)) best = { at, region };
    }
    const m = specialToken.exec(this.pending);
    if (m && (!best || m.index < best.at)) {
      // A region opener that is itself a special token wins over the lone-token rule.
      const asRegion = regions.find((r) => r.open === m[0]);
      best = asRegion ? { at: m.index, region: asRegion } : { at: m.index, token: m[0] };
    }
    return best;
  }

  /** Length of the longest tail that could still grow into an opener. */
  private suspiciousSuffix(): number {
    const p = this.pending;
    let hold = 0;
    const from = Math.max(0, p.length - longestOpen);
    for (let i = from; i < p.length; i++) {
      const tail = p.slice(i);
      if (regions.some((r) => r.open.startsWith(tail))) {
        hold = p.length - i;
        break;
      }
    }
    const sp = specialPrefix.exec(p.slice(Math.max(0, p.length - 45)));
    if (sp) hold = Math.max(hold, sp[0].length);
    return hold;
  }
}

export const forgedNotice = (count: number) => ({
  type: "notice" as const,
  level: "warn" as const,
  code: "protocol_drift_stripped",
  text:
    `The model wrote ${count === 1 ? "a tool call" : `${count} tool calls`} as plain text instead of using the tool ` +
    `channel (protocol drift). ${count === 1 ? "It was" : "They were"} removed from the reply and not run.`,
});
