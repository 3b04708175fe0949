/** Both adapters accept the same names and ids (BullMQ's rules: no ':' and no plain integer ids). */
export function checkQueueName(queue: string): void {
  if (typeof queue !== 'string' || !/^[A-Za-z0-9_.-]{1,100}$/.test(queue)) throw new Error(`invalid queue name: ${JSON.stringify(queue)}`);
}

export function checkJobId(jobId: string): void {
  if (typeof jobId !== 'string' || jobId.length === 0 || jobId.length > 256 || jobId.includes(':') || /^-?\d+$/.test(jobId)) {
    throw new Error(`invalid job id: ${JSON.stringify(jobId)} (1-256 characters, no ':', not a plain integer)`);
  }
}

export function checkConcurrency(concurrency: number): void {
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
}
