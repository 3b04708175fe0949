import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import {
  discordBody,
  emailMessage,
  fit,
  slackBody,
  TEAMS_MAX_BYTES,
  teamsBody,
  telegramBody,
} from '../src/modules/alerts/delivery/chat.ts';
import { SAMPLE_PAYLOAD } from '../src/modules/alerts/delivery/template.ts';
import type { AlertEvent, AlertPayload } from '../src/modules/alerts/delivery/types.ts';

// Each platform's documented limits, as JSON Schema (sums across fields are checked in code below).
const str = (max: number, min = 1) => ({ type: 'string', minLength: min, maxLength: max });
const textObject = (kind: string, max: number) => ({
  type: 'object',
  required: ['type', 'text'],
  properties: { type: { const: kind }, text: str(max), emoji: { type: 'boolean' } },
  additionalProperties: false,
});

const SLACK = {
  type: 'object',
  required: ['text', 'blocks'],
  additionalProperties: false,
  properties: {
    text: str(3000),
    blocks: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: {
        anyOf: [
          {
            type: 'object',
            required: ['type', 'text'],
            properties: { type: { const: 'header' }, text: textObject('plain_text', 150) },
            additionalProperties: false,
          },
          {
            type: 'object',
            required: ['type'],
            anyOf: [{ required: ['text'] }, { required: ['fields'] }],
            properties: {
              type: { const: 'section' },
              text: textObject('mrkdwn', 3000),
              fields: { type: 'array', minItems: 1, maxItems: 10, items: textObject('mrkdwn', 2000) },
            },
            additionalProperties: false,
          },
          {
            type: 'object',
            required: ['type', 'elements'],
            properties: {
              type: { const: 'context' },
              elements: { type: 'array', minItems: 1, maxItems: 10, items: textObject('plain_text', 3000) },
            },
            additionalProperties: false,
          },
          {
            type: 'object',
            required: ['type', 'elements'],
            properties: {
              type: { const: 'actions' },
              elements: {
                type: 'array',
                maxItems: 25,
                items: {
                  type: 'object',
                  required: ['type', 'text', 'url'],
                  properties: {
                    type: { const: 'button' },
                    text: textObject('plain_text', 75),
                    url: { ...str(3000), pattern: '^https?://' },
                  },
                  additionalProperties: false,
                },
              },
            },
            additionalProperties: false,
          },
        ],
      },
    },
  },
};

const DISCORD = {
  type: 'object',
  required: ['embeds'],
  additionalProperties: false,
  properties: {
    username: str(80),
    content: str(2000, 0),
    allowed_mentions: { type: 'object', required: ['parse'], properties: { parse: { type: 'array', maxItems: 0 } } },
    embeds: {
      type: 'array',
      minItems: 1,
      maxItems: 10,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          title: str(256),
          description: str(4096),
          url: { type: 'string', pattern: '^https?://' },
          color: { type: 'integer', minimum: 0, maximum: 0xffffff },
          timestamp: { type: 'string', pattern: '^\\d{4}-\\d\\d-\\d\\dT' },
          footer: { type: 'object', required: ['text'], properties: { text: str(2048) }, additionalProperties: false },
          fields: {
            type: 'array',
            maxItems: 25,
            items: {
              type: 'object',
              required: ['name', 'value'],
              properties: { name: str(256), value: str(1024), inline: { type: 'boolean' } },
              additionalProperties: false,
            },
          },
        },
      },
    },
  },
};

const TELEGRAM = {
  type: 'object',
  required: ['chat_id', 'text', 'parse_mode'],
  additionalProperties: false,
  properties: {
    chat_id: { type: ['string', 'integer'] },
    text: str(4096),
    parse_mode: { enum: ['HTML', 'MarkdownV2'] },
    disable_web_page_preview: { type: 'boolean' },
  },
};

const TEAMS = {
  type: 'object',
  required: ['type', 'attachments'],
  properties: {
    type: { const: 'message' },
    attachments: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['contentType', 'content'],
        properties: {
          contentType: { const: 'application/vnd.microsoft.card.adaptive' },
          contentUrl: { type: 'null' },
          content: {
            type: 'object',
            required: ['type', 'version', 'body'],
            properties: {
              $schema: { const: 'http://adaptivecards.io/schemas/adaptive-card.json' },
              type: { const: 'AdaptiveCard' },
              version: { type: 'string', pattern: '^1\\.([4-9]|\\d\\d)$' },
              body: {
                type: 'array',
                minItems: 1,
                items: {
                  anyOf: [
                    { type: 'object', required: ['type', 'text'], properties: { type: { const: 'TextBlock' }, text: { type: 'string' } } },
                    {
                      type: 'object',
                      required: ['type', 'facts'],
                      properties: {
                        type: { const: 'FactSet' },
                        facts: {
                          type: 'array',
                          items: {
                            type: 'object',
                            required: ['title', 'value'],
                            properties: { title: { type: 'string' }, value: { type: 'string' } },
                          },
                        },
                      },
                    },
                  ],
                },
              },
              actions: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['type', 'url'],
                  properties: { type: { const: 'Action.OpenUrl' }, url: { type: 'string', pattern: '^https?://' } },
                },
              },
            },
          },
        },
      },
    },
  },
};

const ajv = new Ajv({ allErrors: true, strictRequired: false, allowUnionTypes: true });
const validators = { slack: ajv.compile(SLACK), discord: ajv.compile(DISCORD), telegram: ajv.compile(TELEGRAM), teams: ajv.compile(TEAMS) };

function valid(kind: keyof typeof validators, body: unknown): void {
  const v = validators[kind];
  assert.ok(v(body), `${kind}: ${JSON.stringify(v.errors, null, 1)}`);
}

const NASTY = `<b>"Wren"</b> & *bold* _it_ ~s~ |spoiler| > quote \`code\` @everyone @here [x](https://evil.example) 🐦 `;
const huge = (n: number) => NASTY.repeat(Math.ceil(n / NASTY.length)).slice(0, n);
const adversarial: AlertPayload = {
  ...SAMPLE_PAYLOAD,
  event: 'rare_species',
  ruleName: huge(3000),
  teamName: huge(3000),
  commonName: huge(10_000),
  species: huge(500),
  satelliteName: huge(2000),
  message: `Rare species: ${huge(10_000)}`,
  link: 'https://chorus.example/d/1?q="><script>&x=1',
};
const EVENTS: AlertEvent[] = [
  'rare_species',
  'first_of_day',
  'first_of_season',
  'satellite_offline',
  'absence',
  'trend',
  'custom_rule',
  'test',
];
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

test('every body is valid for its platform, for every event and for the plain sample', () => {
  for (const event of EVENTS) {
    const p = { ...SAMPLE_PAYLOAD, event, link: 'https://chorus.example/detections/1' };
    valid('slack', slackBody(p));
    valid('discord', discordBody(p));
    valid('telegram', telegramBody('42', p));
    valid('teams', teamsBody(p));
  }
  const offline = {
    ...SAMPLE_PAYLOAD,
    event: 'satellite_offline' as const,
    species: null,
    commonName: null,
    confidence: null,
    detectionId: null,
  };
  valid('slack', slackBody(offline));
  valid('discord', discordBody(offline));
  valid('telegram', telegramBody('42', offline));
  valid('teams', teamsBody(offline));
});

test('Slack: adversarial text stays within limits with mrkdwn control characters escaped', () => {
  const body = slackBody(adversarial);
  valid('slack', body);
  const mrkdwn = [
    body.text,
    ...body.blocks.flatMap((b: any) => [b.text?.type === 'mrkdwn' ? b.text.text : null, ...(b.fields ?? []).map((f: any) => f.text)]),
  ];
  for (const t of mrkdwn.filter((t): t is string => typeof t === 'string')) {
    assert.ok(!/[<>]/.test(t), 'no raw < or > in mrkdwn');
    assert.ok(!/&(?!amp;|lt;|gt;)/.test(t), 'every & starts an entity');
    assert.ok(!LONE_SURROGATE.test(t));
  }
  assert.ok(body.text.includes('&lt;b&gt;'));
  assert.ok(body.text.endsWith('…'));
});

test('Discord: adversarial text stays within limits, markdown escaped, mentions defused', () => {
  const body = discordBody(adversarial);
  valid('discord', body);
  const e = body.embeds[0];
  const total =
    e.title.length + e.description.length + e.footer.text.length + e.fields.reduce((n, f) => n + f.name.length + f.value.length, 0);
  assert.ok(total <= 6000, `total ${total}`);
  assert.deepEqual(body.allowed_mentions, { parse: [] });
  for (const t of [e.title, e.description, ...e.fields.map((f) => f.value)]) {
    assert.ok(!/(^|[^\\])[*_~|`>]/.test(t), `unescaped markdown in ${t.slice(0, 80)}`);
    assert.ok(!/@(everyone|here)/.test(t));
    assert.ok(!LONE_SURROGATE.test(t));
  }
  assert.ok(e.description.includes('\\*bold\\*'));
});

test('Telegram: adversarial text stays under 4096, user text entity-escaped, only our own tags', () => {
  const body = telegramBody('-1001', adversarial);
  valid('telegram', body);
  assert.ok(body.text.includes('&lt;b&gt;&quot;Wren&quot;&lt;/b&gt;'));
  const withoutOurTags = body.text.replace(/<\/?b>|<a href="[^"<>]*">|<\/a>/g, '');
  assert.ok(!/[<>]/.test(withoutOurTags), 'no raw < or > besides our tags');
  assert.ok(!/&(?!amp;|lt;|gt;|quot;)/.test(body.text), 'every & starts a supported entity');
  assert.ok(body.text.includes('<a href="https://chorus.example/d/1?q=&quot;&gt;&lt;script&gt;&amp;x=1">'));
  assert.equal(body.disable_web_page_preview, true);
  assert.ok(!LONE_SURROGATE.test(body.text));
});

test('Teams: the whole message stays under 28 KB, even with a huge message', () => {
  valid('teams', teamsBody(adversarial));
  assert.ok(Buffer.byteLength(JSON.stringify(teamsBody(adversarial))) <= TEAMS_MAX_BYTES);
  // Escapes and four-byte characters cost more JSON bytes than they count as characters.
  for (const p of [
    { ...adversarial, message: '"\\\u0001'.repeat(50_000) },
    { ...adversarial, message: '🐦'.repeat(40_000) },
  ]) {
    const body = teamsBody(p);
    valid('teams', body);
    const bytes = Buffer.byteLength(JSON.stringify(body));
    assert.ok(bytes <= TEAMS_MAX_BYTES, `${bytes} bytes`);
    assert.ok(bytes > TEAMS_MAX_BYTES - 200, 'the budget is used, not thrown away');
    assert.ok(body.attachments[0].content.body[1].text!.endsWith('…'));
  }
  assert.equal(teamsBody(adversarial).attachments[0].content.actions?.[0].url, adversarial.link);
  assert.equal(teamsBody(SAMPLE_PAYLOAD).attachments[0].content.body[1].text, SAMPLE_PAYLOAD.message);
});

test('email: a one-line subject of at most 200 characters', () => {
  const m = emailMessage({ ...adversarial, message: 'line one\r\nBcc: victim@example.com\n' + huge(1000) });
  assert.ok(m.subject.length <= 200);
  assert.ok(!/[\r\n]/.test(m.subject));
  assert.ok(m.subject.startsWith('[Chorus] line one Bcc'));
  assert.ok(m.text.includes(adversarial.link!));
});

test('fit never splits a surrogate pair or an escape, and leaves short text alone', () => {
  assert.equal(fit('abc', 3), 'abc');
  assert.equal(fit('abcd', 3), 'ab…');
  assert.equal(fit('🐦🐦🐦', 4), '🐦…');
  assert.equal(
    fit('a<b', 5, (c) => (c === '<' ? '&lt;' : c)),
    'a…',
  );
  assert.equal(
    fit('a<b', 6, (c) => (c === '<' ? '&lt;' : c)),
    'a&lt;b',
  );
});
