"use client";
// The org's audit trail, for its owners and admins: who did what and when (sign-ins, invitations,
// role changes, removals, policy versions, share links, approval answers, denied tool calls),
// filtered by person, kind and dates, a page at a time, and exported as JSON Lines (the same
// filters; /api/audit/export, a download the server streams). Members are told they may not.
import Link from "next/link";
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import { markedText, VisibleText } from "../../_lib/visible-text";
import styles from "./audit.module.css";

const PAGE = 50;

interface Filters {
  person: string;
  kind: string;
  from: string;
  to: string;
}

/** The filters as query input: empty fields left out. */
function filterInput(f: Filters) {
  return {
    ...(f.person ? { person: f.person } : {}),
    ...(f.kind ? { kind: f.kind } : {}),
    ...(f.from ? { from: f.from } : {}),
    ...(f.to ? { to: f.to } : {}),
  };
}

/** The kinds, and the areas they fall in ("org" for org.*), for the kind filter. */
function kindChoices(kinds: string[]): string[] {
  const areas = [...new Set(kinds.map((k) => k.split(".")[0]))];
  return [...areas.map((a) => a), ...kinds].sort();
}

export default function AuditPage() {
  const trpc = useTRPC();
  const [filters, setFilters] = useState<Filters>({ person: "", kind: "", from: "", to: "" });
  // The cursors of the pages before this one (the first page has none).
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors[cursors.length - 1];
  const input = filterInput(filters);
  const facets = useQuery(trpc.audit.facets.queryOptions(undefined, { retry: false }));
  const page = useQuery(
    trpc.audit.list.queryOptions({ ...input, ...(after ? { after } : {}), limit: PAGE }, { retry: false }),
  );
  const set = (k: keyof Filters) => (e: { target: { value: string } }) => {
    setFilters({ ...filters, [k]: e.target.value });
    setCursors([]);
  };
  const forbidden = page.error?.data?.code === "FORBIDDEN" || facets.error?.data?.code === "FORBIDDEN";
  const exportHref = `/api/audit/export?${new URLSearchParams(input).toString()}`;

  return (
    <main className={styles.page} data-testid="audit-page">
      <header className={styles.header}>
        <h1>Audit trail</h1>
        <Link href="/settings/members">Members</Link>
        <Link href="/">Sessions</Link>
      </header>
      {forbidden ? (
        <p className={styles.notice} data-testid="audit-forbidden">
          Only the org&apos;s owners and admins can see its audit trail.
        </p>
      ) : (
        <>
          <form className={styles.filters} onSubmit={(e) => e.preventDefault()} data-testid="audit-filters">
            <label>
              Person
              <select value={filters.person} onChange={set("person")} data-testid="audit-person">
                <option value="">Everyone</option>
                {facets.data?.people.map((p) => (
                  <option key={p.id} value={p.id}>
                    {markedText(`${p.name} (${p.email})`)}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Kind
              <select value={filters.kind} onChange={set("kind")} data-testid="audit-kind">
                <option value="">All kinds</option>
                {kindChoices(facets.data?.kinds ?? []).map((k) => (
                  <option key={k} value={k}>
                    {k.includes(".") ? k : `${k}.*`}
                  </option>
                ))}
              </select>
            </label>
            <label>
              From
              <input type="date" value={filters.from} onChange={set("from")} data-testid="audit-from" />
            </label>
            <label>
              To
              <input type="date" value={filters.to} onChange={set("to")} data-testid="audit-to" />
            </label>
            <a className={styles.export} href={exportHref} download="quiver-audit.jsonl" data-testid="audit-export">
              Export JSON Lines
            </a>
          </form>
          {page.error && !forbidden && (
            <p className={styles.error}>Could not load the audit trail: {page.error.message}</p>
          )}
          <table className={styles.table} data-testid="audit-list">
            <thead>
              <tr>
                <th>When (UTC)</th>
                <th>Person</th>
                <th>Kind</th>
                <th>On</th>
                <th>Detail</th>
              </tr>
            </thead>
            <tbody>
              {page.data?.events.map((e) => (
                <tr key={e.id} data-testid="audit-row" data-kind={e.action} data-actor={e.actorId ?? ""}>
                  <td className={styles.mono}>{e.at.replace("T", " ").slice(0, 19)}</td>
                  <td>
                    {e.actor ? (
                      <VisibleText text={`${e.actor.name} (${e.actor.email})`} />
                    ) : e.actorId ? (
                      <span className="muted">{e.actorId} (gone)</span>
                    ) : (
                      <span className="muted">nobody known</span>
                    )}
                  </td>
                  <td className={styles.mono}>{e.action}</td>
                  <td className={styles.mono}>
                    <VisibleText
                      text={[e.target, e.sessionId && `session:${e.sessionId}`].filter(Boolean).join(" · ")}
                      name
                    />
                  </td>
                  <td className={styles.detail}>
                    <VisibleText text={JSON.stringify(e.detail)} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {page.data && page.data.events.length === 0 && (
            <p className="muted" data-testid="audit-empty">
              No events match.
            </p>
          )}
          <div className={styles.pager}>
            <button
              type="button"
              disabled={cursors.length === 0}
              onClick={() => setCursors(cursors.slice(0, -1))}
              data-testid="audit-newer"
            >
              ← Newer
            </button>
            <button
              type="button"
              disabled={!page.data?.next}
              onClick={() => page.data?.next && setCursors([...cursors, page.data.next])}
              data-testid="audit-older"
            >
              Older →
            </button>
          </div>
        </>
      )}
    </main>
  );
}
