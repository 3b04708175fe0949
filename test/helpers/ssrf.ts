/**
 * The address forms the outbound policy (src/infra/outbound) must refuse with an empty allow list:
 * loopback in its spellings, private, link-local (cloud metadata), carrier-grade NAT, unique-local
 * IPv6, IPv4-mapped IPv6 and a name that resolves to loopback. Webhook deliveries and the photo
 * fetcher are both run against this one list.
 */
export const BLOCKED_URLS = [
  'http://127.0.0.1/',
  'http://127.0.0.2/',
  'http://[::1]/',
  'http://10.1.2.3/',
  'http://169.254.169.254/latest/meta-data/',
  'http://192.168.0.1/',
  'http://localhost/',
  'http://[::ffff:127.0.0.1]/',
  'http://0x7f.1/',
  'http://2130706433/',
  'http://0.0.0.0/',
  'http://100.64.0.1/',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
  'http://[::]/',
  'http://[64:ff9b:1::a00:1]/',
] as const;
