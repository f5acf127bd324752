// A subscription's async iterable seen through a function, for tRPC's subscription loop: one
// promise per value where another async-generator layer would cost several (a subscription
// yields every streamed token of a session).
export function mapIterable<T, U>(source: AsyncIterable<T>, map: (value: T) => U, atEnd?: () => void): AsyncIterable<U> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<U> {
      const it = source[Symbol.asyncIterator]();
      return {
        next: () =>
          it.next().then((r): IteratorResult<U> => {
            if (!r.done) return { done: false, value: map(r.value) };
            // May throw: the subscription then ends with that error.
            atEnd?.();
            return { done: true, value: undefined };
          }),
        // tRPC calls it when the client unsubscribes: the source lets go of what it holds.
        return: async () => {
          await it.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
