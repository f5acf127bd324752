// Is this page the read-only share view (opened through a share link, `/s/<id>?shared=1`)? Its
// tRPC client then marks every request (server/protocol/share-view.ts), so the server reads the
// link's viewer cookie for this page only and the owner's own tabs in this browser stay the owner's.
import { isShareViewSearch, SHARE_VIEW_HEADER, SHARE_VIEW_PARAM } from "../../../server/protocol/share-view";

export const isShareView = (): boolean => typeof location !== "undefined" && isShareViewSearch(location.search);

/** Headers of the share view's tRPC HTTP requests (none elsewhere). */
export const shareViewHeaders = (): Record<string, string> => (isShareView() ? { [SHARE_VIEW_HEADER]: "1" } : {});

/** The share view's tRPC WebSocket URL carries the mark as a query (a browser socket has no headers). */
export const shareViewSocketUrl = (url: string): string => (isShareView() ? `${url}?${SHARE_VIEW_PARAM}=1` : url);
