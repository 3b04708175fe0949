/** A species' photo gallery: each photo's display copy with its author, licence and source. */
import { useMemo } from 'react';
import { Link, useParams } from 'react-router';
import { MAX_IMAGE_BYTES, useSpeciesGallery, useSpeciesPhotos } from '../api/hooks/species-images';
import { Credit } from '../components/SpeciesPhoto';
import { ErrorText, Loading } from '../components/ui';
import { useT } from '../i18n';
import { useSpeciesNames } from '../species';

export default function SpeciesPhotos() {
  const t = useT();
  const code = useParams().code ?? '';
  // Asking for the status queues the download when the hub has no photo yet.
  useSpeciesPhotos(useMemo(() => [code], [code]));
  const gallery = useSpeciesGallery(code);
  const name = useSpeciesNames(useMemo(() => [code], [code]))(code, code);
  const photos = gallery.data?.photos ?? [];
  return (
    <section aria-labelledby="sp-title">
      <p>
        <Link to="/species">← {t('nav.species')}</Link>
      </p>
      <h1 id="sp-title">{t('photos.title', { name: name.primary })}</h1>
      <ErrorText error={gallery.error} />
      {gallery.isLoading ? <Loading /> : null}
      {gallery.data && photos.length === 0 ? <p data-testid="gallery-status">{t(`photos.status.${gallery.data.status}`)}</p> : null}
      <div className="gallery" data-testid="gallery">
        {photos.map((p) => (
          <figure key={p.key} className="gallery-item" data-testid="gallery-photo">
            <a href={`${p.fullUrl}&maxBytes=${MAX_IMAGE_BYTES}`} target="_blank" rel="noopener noreferrer">
              <img src={p.squareUrl} width={256} height={256} alt={t('photos.alt', { name: name.primary })} loading="lazy" />
            </a>
            <figcaption>
              <Credit author={p.author} licence={p.licence} licenceUrl={p.licenceUrl} sourceUrl={p.sourceUrl} />
            </figcaption>
          </figure>
        ))}
      </div>
    </section>
  );
}
