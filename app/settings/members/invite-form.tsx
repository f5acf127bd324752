"use client";
// The invite form: an email, a role (those the asker may give) and how long the link lasts. The
// link comes back once, shown here to copy (only its hash is kept); it is also mailed when the
// server has a mail server.
import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../../_lib/trpc";
import styles from "./members.module.css";

type Role = "owner" | "admin" | "member";

export const EXPIRIES = [
  { hours: 1, label: "1 hour" },
  { hours: 24, label: "1 day" },
  { hours: 7 * 24, label: "7 days" },
  { hours: 30 * 24, label: "30 days" },
];

export function invitableRoles(role: Role): Role[] {
  return role === "owner" ? ["member", "admin", "owner"] : role === "admin" ? ["member", "admin"] : [];
}

/** The link box: the full URL of a new invitation, selected for copying, with a Copy button. */
export function InvitationLink({
  path,
  email,
  mailed,
  mailError,
}: {
  path: string;
  email: string;
  mailed: boolean;
  mailError?: string;
}) {
  const url = `${location.origin}${path}`;
  const [copied, setCopied] = useState(false);
  return (
    <div className={styles.linkBox} data-testid="invite-result">
      <p>
        {mailed ? `Mailed to ${email}. ` : mailError ? `The mail to ${email} could not be sent (${mailError}). ` : ""}
        Send {mailed ? "it yourself too if you like" : `this link to ${email}`}; it works once, for that email, and is
        shown only now:
      </p>
      <div className={styles.linkRow}>
        <input
          readOnly
          value={url}
          onFocus={(e) => e.target.select()}
          aria-label="Invitation link"
          data-testid="invite-link"
        />
        <button
          type="button"
          onClick={() =>
            void navigator.clipboard?.writeText(url).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
          data-testid="invite-copy"
        >
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
    </div>
  );
}

export function InviteForm({ myRole }: { myRole: Role }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [hours, setHours] = useState(7 * 24);
  const invite = useMutation(
    trpc.orgs.invite.mutationOptions({
      onSuccess: () => {
        setEmail("");
        void queryClient.invalidateQueries({ queryKey: trpc.orgs.invitations.queryKey() });
      },
    }),
  );
  return (
    <>
      <form
        className={styles.form}
        onSubmit={(e) => {
          e.preventDefault();
          invite.mutate({ email, role, expiresInHours: hours, origin: location.origin });
        }}
      >
        <label>
          Email
          <input
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            placeholder="teammate@example.com"
            data-testid="invite-email"
          />
        </label>
        <label>
          Role
          <select value={role} onChange={(e) => setRole(e.target.value as Role)} data-testid="invite-role">
            {invitableRoles(myRole).map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label>
          Link lasts
          <select value={hours} onChange={(e) => setHours(Number(e.target.value))} data-testid="invite-expiry">
            {EXPIRIES.map((x) => (
              <option key={x.hours} value={x.hours}>
                {x.label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className={styles.primary} disabled={invite.isPending} data-testid="invite-submit">
          {invite.isPending ? "Inviting…" : "Invite"}
        </button>
      </form>
      {invite.error && (
        <p className={styles.error} role="alert" data-testid="invite-error">
          {invite.error.message}
        </p>
      )}
      {invite.data && (
        <InvitationLink
          path={invite.data.path}
          email={invite.data.invitation.email}
          mailed={invite.data.mailed}
          mailError={invite.data.mailError}
        />
      )}
    </>
  );
}
