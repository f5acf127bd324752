// Where each session works (its runner, and workspace on it), indexed by runner as well: the pool
// asks "which sessions are on runner R" on every file change and status event of a runner, and
// "how many sessions has each runner" when it binds one. A scan of every binding made those
// O(sessions) each time, and a server's bindings only grow while it runs.
export class SessionBindings<Place extends { runnerId: string }> {
  private readonly places = new Map<string, Place>();
  private readonly byRunner = new Map<string, Set<string>>();

  get(sessionId: string): Place | undefined {
    return this.places.get(sessionId);
  }

  has(sessionId: string): boolean {
    return this.places.has(sessionId);
  }

  /** Binds or moves the session. */
  set(sessionId: string, place: Place): void {
    this.delete(sessionId);
    this.places.set(sessionId, place);
    let onRunner = this.byRunner.get(place.runnerId);
    if (!onRunner) this.byRunner.set(place.runnerId, (onRunner = new Set()));
    onRunner.add(sessionId);
  }

  delete(sessionId: string): boolean {
    const place = this.places.get(sessionId);
    if (!place) return false;
    this.places.delete(sessionId);
    const onRunner = this.byRunner.get(place.runnerId);
    onRunner?.delete(sessionId);
    if (onRunner?.size === 0) this.byRunner.delete(place.runnerId);
    return true;
  }

  sessionsOn(runnerId: string): string[] {
    return [...(this.byRunner.get(runnerId) ?? [])];
  }

  countOn(runnerId: string): number {
    return this.byRunner.get(runnerId)?.size ?? 0;
  }

  /** A copy: callers unbind while they walk it. */
  entries(): Array<[string, Place]> {
    return [...this.places];
  }
}
