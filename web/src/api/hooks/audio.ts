/** Audio chunks: the spectrogram image of a chunk, with the scale the hub sends in its headers. */
import { useQuery } from '@tanstack/react-query';
import { ApiError } from '../client';
import { tActive } from '../../i18n';

export interface Spectrogram {
  url: string;
  minHz: number;
  maxHz: number;
  durationMs: number;
}

export const audioKeys = { spectrogram: (chunkId: string | undefined) => ['spectrogram', chunkId] as const };

// A PNG with its scale in headers, which the JSON client cannot read: a plain fetch.
async function loadSpectrogram(chunkId: string): Promise<Spectrogram> {
  const res = await fetch(`/api/audio/${encodeURIComponent(chunkId)}/spectrogram.png`, { credentials: 'same-origin' });
  if (!res.ok) {
    const body = await res.json().catch(() => null);
    throw new ApiError(
      res.status,
      body?.error?.code ?? 'HTTP_' + res.status,
      body?.error?.message ?? tActive('error.http', { status: res.status }),
    );
  }
  const num = (h: string, d: number) => Number(res.headers.get(h) ?? d) || d;
  return {
    url: URL.createObjectURL(await res.blob()),
    minHz: num('x-spectrogram-min-hz', 0),
    maxHz: num('x-spectrogram-max-hz', 12000),
    durationMs: num('x-spectrogram-duration-ms', 3000),
  };
}

/** The chunk's spectrogram, once the detection names its chunk; an image never changes, so it is never stale. */
export function useSpectrogram(chunkId: string | undefined) {
  return useQuery({
    queryKey: audioKeys.spectrogram(chunkId),
    enabled: !!chunkId,
    staleTime: Infinity,
    queryFn: () => loadSpectrogram(chunkId!),
  });
}
