// Mail of accounts (password reset links; invitations reuse it): sent by SMTP through nodemailer
// when QUIVER_SMTP_URL is set, else written to the server's log, so a server with no mail set up
// still lets its operator pass a link on by hand. nodemailer is loaded only when SMTP is set.
import type { Transporter } from "nodemailer";

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** True when mail leaves by SMTP (pages then say "sent" rather than "ask the operator"). */
  readonly smtp: boolean;
  send(mail: Mail): Promise<void>;
  close(): void;
}

export interface MailerOptions {
  /** smtp://user:pass@host:port or smtps://…; none: the log. */
  smtpUrl?: string;
  from?: string;
  log(line: string): void;
}

export function createMailer(options: MailerOptions): Mailer {
  const from = options.from ?? "Quiver <quiver@localhost>";
  if (!options.smtpUrl) {
    return {
      smtp: false,
      async send(mail) {
        // One line per mail: a log reader finds the link without reading a multi-line body.
        options.log(
          `mail (no QUIVER_SMTP_URL, so not sent) to ${mail.to}: ${mail.subject} — ${mail.text.replace(/\s*\n\s*/g, " ")}`,
        );
      },
      close() {},
    };
  }
  const smtpUrl = options.smtpUrl;
  const transport: Promise<Transporter> = import("nodemailer").then((m) => m.default.createTransport(smtpUrl));
  transport.catch(() => undefined); // a transport that cannot be made fails each send, with its reason
  let closed = false;
  return {
    smtp: true,
    async send(mail) {
      try {
        await (await transport).sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
      } catch (err) {
        // The caller's answer does not say whether an address exists; the operator learns why.
        options.log(`mail to ${mail.to} not sent: ${(err as Error).message}`);
        throw err;
      }
    },
    close() {
      if (closed) return;
      closed = true;
      void transport.then(
        (t) => t.close(),
        () => undefined,
      );
    },
  };
}
