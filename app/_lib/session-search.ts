// The session switcher's search: every word typed must appear in the title (any case, any
// order); the list keeps its order (most recently active first).
export function matchSessions<T extends { title: string }>(sessions: readonly T[], query: string): T[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...sessions];
  return sessions.filter((s) => {
    const title = s.title.toLowerCase();
    return words.every((w) => title.includes(w));
  });
}

/** "3 min ago", "2 h ago", "5 d ago": when a session was last active. */
export function ago(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}
