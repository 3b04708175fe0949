import type { ImagesConfig } from '../../../config.ts';
import type { AllowList } from '../../../infra/outbound/index.ts';
import { createFetcher, type Fetcher } from './fetch.ts';
import { inaturalistProvider } from './inaturalist.ts';
import type { PhotoProvider, ProviderName } from './types.ts';
import { wikimediaProvider } from './wikimedia.ts';

export { RefusedImage } from './fetch.ts';
export { UpstreamError, type PhotoCandidate, type PhotoProvider, type ProviderName } from './types.ts';

export interface ProviderSet {
  providers: PhotoProvider[];
  /** The fetcher of a provider: image downloads share the provider's pacing. */
  fetcherOf(name: ProviderName): Fetcher;
}

/** The configured providers in IMAGES_PROVIDERS order, each with its own paced fetcher under the outbound policy. */
export function createProviders(config: ImagesConfig, userAgent: string, allow: AllowList): ProviderSet {
  const fetchers = new Map<ProviderName, Fetcher>();
  const fetcherOf = (name: ProviderName) => {
    let f = fetchers.get(name);
    if (!f) {
      f = createFetcher({ intervalMs: config.intervalMs, timeoutMs: 20_000, userAgent, allow });
      fetchers.set(name, f);
    }
    return f;
  };
  const providers = config.providers.map((name) =>
    name === 'wikimedia'
      ? wikimediaProvider(config.wikimediaUrl, fetcherOf(name))
      : inaturalistProvider(config.inaturalistUrl, fetcherOf(name)),
  );
  return { providers, fetcherOf };
}
