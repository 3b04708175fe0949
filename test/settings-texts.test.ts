/**
 * Settings people can read (issue 23): every key of the registry has a name in English and
 * German and a German description in the dashboard (the English one is the registry's), and no
 * entry names a key the registry no longer has.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SETTINGS } from '../src/modules/settings/registry.ts';
import { SETTING_HELP_DE, SETTING_LABELS } from '../web/src/locales/settings.ts';

describe('setting texts of the dashboard', () => {
  const keys = SETTINGS.map((s) => s.key).sort();
  for (const [name, table] of [
    ['English names', SETTING_LABELS.en],
    ['German names', SETTING_LABELS.de],
    ['German descriptions', SETTING_HELP_DE],
  ] as const) {
    test(`${name}: one per registry key`, () => {
      const missing = keys.filter((k) => !table[k]?.trim());
      assert.deepEqual(missing, [], `registry keys without ${name}`);
      assert.deepEqual(
        Object.keys(table).filter((k) => !keys.includes(k)),
        [],
        `${name} of keys the registry does not have`,
      );
    });
  }
});
