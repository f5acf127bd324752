"use client";
// The org's SSO email domains and whether DNS proved each its own: a verified domain admits people
// through the org's identity provider; one waiting shows the TXT record to add at the domain's DNS
// provider and a Verify button (owners) that looks it up and says what it found. A verified domain
// whose record the daily look found gone says when it stops admitting people unless it is back.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../../../_lib/trpc";
import styles from "../sign-in.module.css";

export interface DomainStatus {
  domain: string;
  verified: boolean;
  record: { name: string; value: string };
  /** Dates as tRPC sends them (ISO strings). */
  recordMissing?: { since: string | Date; releaseAt: string | Date };
}

const day = (d: string | Date) => new Date(d).toLocaleDateString(undefined, { dateStyle: "medium" });

export function SsoDomainList({ domains, changeable }: { domains: DomainStatus[]; changeable: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [results, setResults] = useState<Record<string, string>>({});
  const verify = useMutation(
    trpc.sso.verifyDomain.mutationOptions({
      onSuccess: async (r, { domain }) => {
        setResults((all) => ({ ...all, [domain]: r.verified ? (r.message ?? "") : (r.message ?? "Not found yet.") }));
        await queryClient.invalidateQueries({ queryKey: trpc.sso.pathKey() });
      },
      onError: (err, { domain }) => setResults((all) => ({ ...all, [domain]: err.message })),
    }),
  );
  if (domains.length === 0) return null;
  return (
    <section data-testid="sso-domain-list">
      <p>
        A domain admits people only once its DNS proves it this organization&rsquo;s: add the TXT record shown at the
        domain&rsquo;s DNS provider, then Verify.
      </p>
      <ul className={styles.domains}>
        {domains.map((d) => (
          <li key={d.domain} data-testid="sso-domain" data-domain={d.domain} data-verified={d.verified}>
            <strong>{d.domain}</strong>{" "}
            {d.verified && !d.recordMissing ? (
              <span className={styles.ok}>Verified</span>
            ) : (
              <>
                {d.recordMissing ? (
                  <span className={styles.error} data-testid="sso-record-missing">
                    Verified, but its DNS record has been missing since {day(d.recordMissing.since)}: it stops admitting
                    people on {day(d.recordMissing.releaseAt)} unless the record is back.
                  </span>
                ) : (
                  <span className={styles.note}>Waiting for its DNS record</span>
                )}
                <div className={styles.record}>
                  <span>TXT</span>
                  <code data-testid="sso-record-name">{d.record.name}</code>
                  <code data-testid="sso-record-value">{d.record.value}</code>
                </div>
                <button
                  type="button"
                  disabled={!changeable || verify.isPending}
                  onClick={() => verify.mutate({ domain: d.domain })}
                  data-testid="sso-verify"
                >
                  {verify.isPending && verify.variables?.domain === d.domain ? "Looking it up…" : "Verify"}
                </button>
                {results[d.domain] && (
                  <p className={styles.error} role="alert" data-testid="sso-verify-result">
                    {results[d.domain]}
                  </p>
                )}
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
