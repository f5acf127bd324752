// The environment of a server a test starts in-process: an ephemeral port, its own data folder,
// no local runner (the test starts the runners it needs), and whatever the test adds.
import { parseEnv, type Env } from "../env";

export function testServerEnv(dataDir: string, vars: Record<string, string | undefined> = {}): Env {
  return parseEnv({ PORT: "0", QUIVER_DATA_DIR: dataDir, QUIVER_LOCAL_RUNNER: "0", ...vars });
}
