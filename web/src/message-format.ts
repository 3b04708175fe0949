/**
 * Fills a UI string's placeholders, outside React so tests can call it.
 *
 * - `{name}` takes the value as given; a placeholder without a value stays as written.
 * - `{n, plural, one {# detection} other {# detections}}` picks the form `Intl.PluralRules`
 *   names for n in the language (`=0`-style exact forms first, `other` when the language's
 *   category has no form); `#` is n in the language's number format ("1,234" / "1.234").
 *   Other placeholders may stand inside a form. A plural's value must be a number: a string
 *   (already formatted) takes the `other` form and is shown as given.
 */
export type MessageVars = Record<string, string | number>;

const PLURAL_START = /^\{(\w+), *plural *,/;
const FORM = /^\s*(=\d+(?:\.\d+)?|zero|one|two|few|many|other)\s*\{/;

const pluralRules = new Map<string, Intl.PluralRules>();
const numberFormats = new Map<string, Intl.NumberFormat>();
function cached<T>(map: Map<string, T>, lang: string, make: () => T): T {
  let v = map.get(lang);
  if (!v) map.set(lang, (v = make()));
  return v;
}

/** The index of the brace closing the one at `open`, or -1. */
function closing(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    if (s[i] === '{') depth++;
    else if (s[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

/** The forms of a plural's body (` one {…} other {…}`) by selector, or null when it does not parse. */
function formsOf(body: string): Map<string, string> | null {
  const forms = new Map<string, string>();
  let rest = body;
  while (rest.trim() !== '') {
    const m = FORM.exec(rest);
    if (!m) return null;
    const open = m[0].length - 1;
    const end = closing(rest, open);
    if (end < 0) return null;
    forms.set(m[1], rest.slice(open + 1, end));
    rest = rest.slice(end + 1);
  }
  return forms.has('other') ? forms : null;
}

function plural(forms: Map<string, string>, value: string | number | undefined, vars: MessageVars, lang: string): string {
  let form: string | undefined;
  let shown: string;
  if (typeof value === 'number') {
    form = forms.get(`=${value}`) ?? forms.get(cached(pluralRules, lang, () => new Intl.PluralRules(lang)).select(value));
    shown = cached(numberFormats, lang, () => new Intl.NumberFormat(lang)).format(value);
  } else {
    shown = value ?? '#';
  }
  // `#` is replaced before the form's own placeholders are filled, so a value holding "#" stays as it is.
  return formatMessage((form ?? forms.get('other') ?? '').replaceAll('#', shown), vars, lang);
}

export function formatMessage(template: string, vars: MessageVars = {}, lang: string): string {
  if (!template.includes('{')) return template;
  let out = '';
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open < 0) {
      out += template.slice(i);
      break;
    }
    out += template.slice(i, open);
    const rest = template.slice(open);
    const start = PLURAL_START.exec(rest);
    const end = start ? closing(template, open) : -1;
    const forms = start && end > 0 ? formsOf(template.slice(open + start[0].length, end)) : null;
    if (start && forms) {
      out += plural(forms, vars[start[1]], vars, lang);
      i = end + 1;
      continue;
    }
    const simple = /^\{(\w+)\}/.exec(rest);
    if (simple && Object.hasOwn(vars, simple[1])) {
      out += String(vars[simple[1]]);
      i = open + simple[0].length;
      continue;
    }
    out += '{';
    i = open + 1;
  }
  return out;
}

/** The placeholder names a UI string uses: plural ones and those inside their forms too (`{{x}}` is text). */
export function placeholdersOf(template: string): string[] {
  const names = new Set<string>();
  for (let i = template.indexOf('{'); i >= 0; i = template.indexOf('{', i + 1)) {
    const rest = template.slice(i);
    const start = PLURAL_START.exec(rest);
    const end = start ? closing(template, i) : -1;
    const forms = start && end > 0 ? formsOf(template.slice(i + start[0].length, end)) : null;
    if (start && forms) {
      names.add(start[1]);
      for (const form of forms.values()) for (const name of placeholdersOf(form)) names.add(name);
      i = end;
      continue;
    }
    const simple = /^\{(\w+)\}/.exec(rest);
    if (simple && template[i - 1] !== '{') names.add(simple[1]);
  }
  return [...names].sort();
}
