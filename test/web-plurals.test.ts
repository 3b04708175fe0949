// The dashboard's counted strings take the form Intl.PluralRules names for the count in the
// language on screen ("1 detection", "2 detections"; "1 Erkennung", "2 Erkennungen").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatMessage, placeholdersOf as placeholders, type MessageVars } from '../web/src/message-format.ts';
import { en, type Key } from '../web/src/locales/en.ts';
import { de } from '../web/src/locales/de.ts';
import { FIELD_MESSAGES } from '../web/src/locales/errors.ts';

const DICTS = { en, de } as const;
const t = (lang: 'en' | 'de', key: Key, vars?: MessageVars) => formatMessage(DICTS[lang][key], vars, lang);

test('English: one detection, other detections, with the count in the language number format', () => {
  assert.equal(t('en', 'det.total', { n: 1 }), '1 detection');
  assert.equal(t('en', 'det.total', { n: 2 }), '2 detections');
  assert.equal(t('en', 'det.total', { n: 0 }), '0 detections');
  assert.equal(t('en', 'det.total', { n: 1234 }), '1,234 detections');
  assert.equal(t('en', 'alerts.summary', { total: 1, unread: 0 }), '1 alert, 0 unacknowledged');
  assert.equal(t('en', 'dir.counts', { members: 1, devices: 3 }), '1 member · 3 devices');
  assert.equal(t('en', 'storage.days', { days: 1 }), '1 day');
  assert.equal(t('en', 'storage.days', { days: 1.5 }), '1.5 days');
  assert.equal(
    t('en', 'fleet.deletePreview', { detections: 1, chunks: 2, bytes: '2.05 kB', alerts: 1, notes: 0 }),
    'Deleting removes 1 detection, 2 audio chunks (2.05 kB); 1 alert and 0 field notes are unlinked.',
  );
  assert.equal(t('en', 'sessions.counts', { chunks: 1, detections: 1, species: 1 }), '1 chunk · 1 detection · 1 species');
  assert.equal(formatMessage(FIELD_MESSAGES.en.minLength, { limit: 1 }, 'en'), 'At least 1 character');
  assert.equal(formatMessage(FIELD_MESSAGES.en.maxLength, { limit: 100 }, 'en'), 'At most 100 characters');
});

test('German: eine Erkennung, zwei Erkennungen, and the German number format', () => {
  assert.equal(t('de', 'det.total', { n: 1 }), '1 Erkennung');
  assert.equal(t('de', 'det.total', { n: 2 }), '2 Erkennungen');
  assert.equal(t('de', 'det.total', { n: 1234 }), '1.234 Erkennungen');
  assert.equal(t('de', 'alerts.summary', { total: 1, unread: 1 }), '1 Meldung, 1 nicht gesehen');
  assert.equal(t('de', 'dir.counts', { members: 1, devices: 1 }), '1 Mitglied · 1 Gerät');
  assert.equal(t('de', 'dir.counts', { members: 2, devices: 2 }), '2 Mitglieder · 2 Geräte');
  assert.equal(t('de', 'storage.days', { days: 1.5 }), '1,5 Tage');
  assert.equal(t('de', 'storage.warnBelow', { days: 1 }), '(Warnung unter 1 Tag)');
  assert.equal(t('de', 'storage.warnBelow', { days: 14 }), '(Warnung unter 14 Tagen)');
  assert.equal(t('de', 'stats.map.pointTitle', { name: 'Teich', n: 1, species: 1 }), 'Teich: 1 Erkennung, 1 Art');
  assert.equal(t('de', 'stats.window.days', { n: 30 }), 'Letzte 30 Tage');
});

test('a count given as text takes the other form as written; other placeholders fill as before', () => {
  assert.equal(t('en', 'det.total', { n: '1' }), '1 detections');
  assert.equal(formatMessage('{a} and {b}', { a: 'x' }, 'en'), 'x and {b}', 'a placeholder without a value stays');
  assert.equal(t('en', 'channels.template.hint'), en['channels.template.hint'], '{{placeholders}} stay as written');
  assert.equal(formatMessage('{n, plural, one {# for {who}} other {# for {who}}}', { n: 1, who: '#1 {n}' }, 'en'), '1 for #1 {n}');
  assert.equal(formatMessage('{n, plural, =0 {none} one {# item} other {# items}}', { n: 0 }, 'en'), 'none');
});

test('every plural parses with an other form in both languages, and both name the same placeholders', () => {
  const plurals = (Object.keys(en) as Key[]).filter((k) => en[k].includes(', plural,') || de[k].includes(', plural,'));
  assert.ok(plurals.length >= 30, `${plurals.length} counted strings`);
  for (const key of Object.keys(en) as Key[]) {
    assert.deepEqual(placeholders(de[key]), placeholders(en[key]), `${key}: the same placeholders`);
  }
  for (const key of plurals) {
    for (const lang of ['en', 'de'] as const) {
      const vars = Object.fromEntries(placeholders(DICTS[lang][key]).map((v) => [v, 2]));
      const text = t(lang, key, vars);
      assert.doesNotMatch(text, /plural|[{}#]/, `${lang} ${key} fills every plural: ${text}`);
      for (const name of placeholders(DICTS[lang][key])) {
        const one = t(lang, key, { ...vars, [name]: 1 });
        assert.doesNotMatch(one, /plural|[{}#]/, `${lang} ${key} with ${name} = 1: ${one}`);
      }
    }
  }
});
