// A bash probe of TCP reachability, run from inside a sandbox by the network tests.

/**
 * One line per `host:port` target, OPEN or CLOSED; never hangs past 3 s a target. The words are
 * split by quotes, so a terminal's echo of the typed probe never reads as its result.
 */
export const probe = (targets: string[]) =>
  targets
    .map(
      (t) =>
        `if timeout 3 bash -c 'exec 3<>/dev/tcp/${t.replace(/:(\d+)$/, "/$1")}' 2>/dev/null; then echo "O""PEN ${t}"; else echo "CLO""SED ${t}"; fi`,
    )
    .join("\n");
