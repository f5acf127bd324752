// The fetch an MCP server over Streamable HTTP is reached with: the answer to a message (a POST)
// is read up to MCP_ANSWER_MAX and no further. The SDK reads a JSON answer whole
// (`response.json()`) and an SSE one without a limit, and a result is then decoded, parsed and
// copied for the pipeline, so a server answering with gigabytes would take the server down
// before any cut of its result applies. The long-lived GET stream of notifications is left as it is.

/** Far above any tool result the model is shown (30 KB) or stored whole (64 MiB ceiling). */
export const MCP_ANSWER_MAX = 64 * 1024 * 1024;

export class McpAnswerTooLarge extends Error {}

export function boundedFetch(max = MCP_ANSWER_MAX, base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    if ((init?.method ?? "GET").toUpperCase() !== "POST" || !res.body) return res;
    const declared = Number(res.headers.get("content-length") ?? NaN);
    const tooLarge = () => new McpAnswerTooLarge(`the MCP server's answer is over ${max} bytes, the most Quiver reads`);
    if (declared > max) {
      await res.body.cancel().catch(() => undefined);
      throw tooLarge();
    }
    let seen = 0;
    const counted = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > max) controller.error(tooLarge());
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
