/**
 * A species' square photo with its credit (author, licence, source): the credit is shown
 * wherever the photo is, as the licences ask. Nothing is shown while a photo is pending or missing.
 */
import { Link } from 'react-router';
import type { SpeciesPhoto } from '../api/hooks/species-images';
import { useT } from '../i18n';

export function Credit({
  author,
  licence,
  licenceUrl,
  sourceUrl,
}: {
  author: string;
  licence: string;
  licenceUrl?: string | null;
  sourceUrl: string;
}) {
  const t = useT();
  return (
    <span className="photo-credit small muted" data-testid="photo-credit">
      {t('photos.by', { author })} ·{' '}
      {licenceUrl ? (
        <a href={licenceUrl} target="_blank" rel="noopener noreferrer license">
          {licence}
        </a>
      ) : (
        licence
      )}{' '}
      ·{' '}
      <a href={sourceUrl} target="_blank" rel="noopener noreferrer">
        {t('photos.source')}
      </a>
    </span>
  );
}

/** The 64 px (or 128 px) square; with `credit`, the credit line beside it, else in its tooltip. */
export function SpeciesThumb({
  photo,
  name,
  size = 64,
  credit = false,
  link = true,
}: {
  photo?: SpeciesPhoto;
  name: string;
  size?: 64 | 128;
  credit?: boolean;
  link?: boolean;
}) {
  const t = useT();
  if (!photo || photo.status !== 'ready' || !photo.key || !photo.author || !photo.licence || !photo.sourceUrl) return null;
  const title = t('photos.creditTitle', { author: photo.author, licence: photo.licence });
  const img = (
    <img
      className="species-thumb"
      data-testid="species-thumb"
      src={`/api/species/image/by-key?key=${photo.key}&square=${size * 2 > 512 ? 512 : size * 2}`}
      width={size}
      height={size}
      alt={t('photos.alt', { name })}
      title={title}
      loading="lazy"
    />
  );
  return (
    <figure className="species-photo">
      {link ? <Link to={`/species/${encodeURIComponent(photo.code)}/photos`}>{img}</Link> : img}
      {credit ? (
        <figcaption>
          <Credit author={photo.author} licence={photo.licence} licenceUrl={photo.licenceUrl} sourceUrl={photo.sourceUrl} />
        </figcaption>
      ) : null}
    </figure>
  );
}
