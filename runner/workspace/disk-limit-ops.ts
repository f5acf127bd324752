// Commands and the disk limit: an op (shell, a terminal's command) that ends with the workspace
// at or past its limit gets a line naming the limit after its output, so "No space left on
// device" from dd or npm is never the whole story. Wrapped around ops where workspaces are served.
import type { AnyOp, OpResult } from "../ops";
import type { DiskLimit } from "./disk-limit";

export function withDiskNotice(op: AnyOp, limitOf: () => DiskLimit | undefined): AnyOp {
  return {
    input: op.input,
    async run(input, ctx): Promise<OpResult> {
      const limit = limitOf();
      let mark: number | undefined;
      try {
        mark = limit?.mark();
      } catch {
        /* the disk could not be read: the count decides alone */
      }
      const result = await op.run(input, ctx);
      let line: string | null = null;
      try {
        line = (await limit?.afterCommand(mark ?? 0)) ?? null;
      } catch {
        /* the folder could not be measured: the result stands as it is */
      }
      if (!line) return result;
      return {
        ...result,
        output: `${result.output}${result.output.endsWith("\n") || !result.output ? "" : "\n"}${line}\n`,
        meta: { ...result.meta, diskLimitReached: true },
      };
    },
  };
}
