/** The photo provider port: one adapter per upstream service, each with its base URL from the environment. */

export type ProviderName = 'wikimedia' | 'inaturalist';
export const PROVIDER_NAMES: readonly ProviderName[] = ['wikimedia', 'inaturalist'];

/** A photo an upstream offers under a licence we may use with credit (licence.ts filters the rest out). */
export interface PhotoCandidate {
  provider: ProviderName;
  /** The provider's own id of the photo (a file title, a photo id): one stored photo per id and species. */
  sourceId: string;
  /** Where the provider serves the image; it comes from the provider's answer, never from a caller. */
  imageUrl: string;
  author: string;
  licence: string;
  licenceUrl: string | null;
  /** The photo's page at the provider: the source link shown beside the credit. */
  sourceUrl: string;
}

export interface PhotoProvider {
  readonly name: ProviderName;
  /** Up to `limit` reusable photos of the species, best first; [] when the provider has none. */
  find(scientificName: string, limit: number): Promise<PhotoCandidate[]>;
}

/** An upstream answer we cannot use now (network, 5xx, 429): the download job is retried. */
export class UpstreamError extends Error {}
