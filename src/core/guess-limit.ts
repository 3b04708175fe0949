/**
 * Guessing brake for routes that take a secret in the request (share links, invite tokens):
 * each refusal a rule recognises counts against the client address, and once the budget is
 * spent the address gets 429 on every such route until the window frees. Kept as hooks so the
 * routes and services stay as they are.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, tooManyRequests } from './errors.ts';
import type { RateLimit } from './rate-limit.ts';

export interface GuessRule {
  /** Route URLs (as declared, with /api) starting with this are watched. */
  readonly urlPrefix: string;
  /** Which refusals are guesses (a forged link, an unknown token), as opposed to real but spent secrets. */
  readonly isGuess: (err: AppError) => boolean;
}

export function installGuessLimit(app: FastifyInstance, limit: RateLimit, rules: readonly GuessRule[]): void {
  const ruleOf = (req: FastifyRequest) => {
    const url = req.routeOptions.url;
    return url === undefined ? undefined : rules.find((r) => url.startsWith(r.urlPrefix));
  };
  // Callback style: the few watched routes wait for the count, every other request passes at once.
  app.addHook('onRequest', (req, _reply, done) => {
    if (!ruleOf(req)) return done();
    limit.spent(req.ip).then(
      (wait) =>
        done(wait === null ? undefined : tooManyRequests('Too many invalid links or tokens from this address; try again later', wait)),
      (err: Error) => done(err),
    );
  });
  app.addHook('onError', async (req, _reply, err) => {
    const rule = ruleOf(req);
    if (rule && err instanceof AppError && err.status !== 429 && rule.isGuess(err)) await limit.hit(req.ip);
  });
}
