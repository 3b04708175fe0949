/**
 * Group commit for the ingest path's statements: calls made while a batch is in flight are run
 * together as the next batch, so N chunks arriving together cost one database round trip (and, on
 * PostgreSQL, one commit) instead of N. An idle hub adds no wait: the first call runs at the end of
 * the current turn of the event loop.
 */

export interface BatchOptions {
  /** Most items in one batch (bounds the statement's parameter arrays). */
  max?: number;
}

/**
 * `run` gets the items in call order and returns one result per item, in the same order. When a
 * batch of several fails, each of its items is tried again alone, so one bad item (a foreign key
 * that vanished meanwhile) cannot fail the others; an item that fails alone rejects its caller.
 */
export function batched<I, O>(run: (items: I[]) => Promise<O[]>, opts: BatchOptions = {}): (item: I) => Promise<O> {
  const max = opts.max ?? 64;
  type Waiter = { item: I; resolve: (o: O) => void; reject: (err: unknown) => void };
  let queue: Waiter[] = [];
  let running = false;

  async function runOne(w: Waiter): Promise<void> {
    try {
      const [out] = await run([w.item]);
      w.resolve(out);
    } catch (err) {
      w.reject(err);
    }
  }

  async function flush(): Promise<void> {
    running = true;
    while (queue.length > 0) {
      const batch = queue.slice(0, max);
      queue = queue.slice(batch.length);
      if (batch.length === 1) {
        await runOne(batch[0]);
        continue;
      }
      let out: O[] | null = null;
      try {
        out = await run(batch.map((w) => w.item));
        if (out.length !== batch.length) throw new Error(`batch returned ${out.length} results for ${batch.length} items`);
      } catch {
        out = null;
      }
      if (out) batch.forEach((w, i) => w.resolve(out[i]));
      else for (const w of batch) await runOne(w);
    }
    running = false;
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (!running) {
        running = true;
        // After this turn of the event loop: the messages already read from the sockets are
        // parsed first and join this batch (on PGlite the statement runs on this thread, so
        // nothing would join a batch started at once).
        setImmediate(() => void flush());
      }
    });
}
