// How the read-only share view marks its requests, so that a share link's viewer cookie applies
// to that view only (server/auth/identity.ts): the view's page URL and its tRPC WebSocket URL
// carry `?shared=1`, its tRPC HTTP requests the header below. Unmarked requests never count as
// a viewer's, so the owner's own tabs in a browser that also opened a link stay the owner's.
// Marking can only take rights away (a marked request is a viewer or nobody), never add them.
export const SHARE_VIEW_PARAM = "shared";
export const SHARE_VIEW_HEADER = "x-quiver-share-view";

/** The share view's URL of a session (where opening a link lands). */
export const shareViewPath = (sessionId: string): string => `/s/${sessionId}?${SHARE_VIEW_PARAM}=1`;

/** True when a page at this location (its `search`) is the share view. */
export const isShareViewSearch = (search: string): boolean => new URLSearchParams(search).get(SHARE_VIEW_PARAM) === "1";
