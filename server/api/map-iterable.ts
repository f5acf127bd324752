// A subscription's async iterable seen through a function, for tRPC's subscription loop: one
// promise per value where another async-generator layer would cost several (a subscription
// yields every streamed token of a session).
// `onClose` runs once however the subscription ends (run out, failed, or returned early): a
// socket's count of open subscriptions is kept with it, at no cost per value.
export function mapIterable<T, U>(
  source: AsyncIterable<T>,
  map: (value: T) => U,
  atEnd?: () => void,
  onClose?: () => void,
): AsyncIterable<U> {
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    onClose?.();
  };
  const failed = onClose
    ? (err: unknown) => {
        close();
        throw err;
      }
    : undefined;
  return {
    [Symbol.asyncIterator](): AsyncIterator<U> {
      const it = source[Symbol.asyncIterator]();
      return {
        next: () =>
          it.next().then((r): IteratorResult<U> => {
            if (!r.done) return { done: false, value: map(r.value) };
            close();
            // May throw: the subscription then ends with that error.
            atEnd?.();
            return { done: true, value: undefined };
          }, failed),
        // tRPC calls it when the client unsubscribes: the source lets go of what it holds.
        return: async () => {
          close();
          await it.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
