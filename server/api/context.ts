// The tRPC context of a request or WebSocket connection, from who it is (server/auth).
import { isOperator, type Identity } from "../auth";
import { ACCOUNT_SIGN_IN_TEXT, LINK_MESSAGES, NO_ORG_TEXT, SIGN_IN_TEXT } from "../auth/pages";
import type { Services } from "../services/types";
import type { Context } from "./trpc";

/** `signal`: a viewer's WebSocket connection ends its subscriptions when the link ends. */
export function contextFor(services: Services, identity: Identity, signal?: AbortSignal): Context {
  switch (identity.kind) {
    case "owner":
      return { services, actor: identity.actor, ...(isOperator(identity) ? { operator: true } : {}) };
    case "viewer":
      return { services, actor: null, viewer: { sessionId: identity.sessionId, linkId: identity.linkId, signal } };
    case "ended":
      return { services, actor: null, refusal: { code: "FORBIDDEN", message: LINK_MESSAGES[identity.reason] } };
    case "outsider":
      return { services, actor: null, refusal: { code: "FORBIDDEN", message: NO_ORG_TEXT } };
    case "anonymous":
      return {
        services,
        actor: null,
        refusal: { code: "UNAUTHORIZED", message: identity.accounts ? ACCOUNT_SIGN_IN_TEXT : SIGN_IN_TEXT },
      };
  }
}
