/**
 * The house rules, checked by `npm run lint` (and so by CI). Layers from the ground up:
 *   0. src/platform (process helpers the hub and the satellite both use; nothing of ours)
 *   1. src/protocol (what hub and satellites share), src/core, src/config.ts
 *   2. src/infra (ports and adapters; knows nothing of the domain)
 *   3. src/modules (each domain's rules and tables)
 *   4. src/ingest, src/inference (messages and jobs wired into module services)
 *   5. src/app.ts, src/services.ts, src/routes.ts, src/runtime.ts, src/bootstrap.ts, src/database.ts,
 *      src/main.ts and src/commands/ (composition)
 * The reference satellite (src/satellite) stands beside the hub on the protocol alone.
 * docs/architecture.md explains the picture.
 */
const COMPOSITION = '^src/((app|services|metrics-collectors|routes|runtime|bootstrap|database|main)\\.ts$|commands/)';
const REPO = '(repo|[^/]*-repo)\\.ts$';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'No file imports another in a loop.', from: {}, to: { circular: true } },
    {
      // A file-level check misses settings/registry.ts -> system/version.ts with
      // system/releases.ts -> settings/service.ts: no file loops, but the two modules need each
      // other. Folder scope compares whole folders (a folder's edges are those of every file under
      // it); $1 keeps a module's own subfolders (alerts/delivery) out, they may loop with it.
      name: 'no-module-cycle',
      severity: 'error',
      comment: 'No module folder imports another in a loop, through any number of modules: one of the two listens on the bus or the rule moves down.',
      scope: 'folder',
      from: { path: '^src/modules/([^/]+)' },
      to: { path: '^src/modules/', pathNot: '^src/modules/$1(/|$)', circular: true },
    },
    {
      name: 'protocol-stands-alone',
      severity: 'error',
      comment: 'The protocol vocabulary is shared with third-party satellites: it imports nothing of ours but itself.',
      from: { path: '^src/protocol/' },
      to: { path: '^src/', pathNot: '^src/protocol/' },
    },
    {
      name: 'satellite-speaks-protocol-only',
      severity: 'error',
      comment: 'The reference satellite depends on the protocol alone, as a third-party satellite would.',
      from: { path: '^src/satellite/' },
      to: { path: '^src/', pathNot: '^src/(satellite|protocol|platform)/' },
    },
    {
      name: 'platform-stands-alone',
      severity: 'error',
      comment: 'Process helpers shared by the hub and the satellite import nothing of ours.',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: '^src/platform/' },
    },
    {
      name: 'hub-does-not-import-the-satellite',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(satellite/|main\\.ts$)' },
      to: { path: '^src/satellite/' },
    },
    {
      name: 'core-is-ground',
      severity: 'error',
      comment: 'core and config import only the ground layer.',
      from: { path: '^src/(core/|config\\.ts$)' },
      to: { path: '^src/', pathNot: '^src/(core/|protocol/|config\\.ts$)' },
    },
    {
      name: 'infra-knows-no-domain',
      severity: 'error',
      comment: 'Ports and adapters know nothing of modules, ingest, inference or the composition.',
      from: { path: '^src/infra/' },
      to: { path: '^src/', pathNot: '^src/(infra/|core/|protocol/|config\\.ts$)' },
    },
    {
      name: 'modules-point-down',
      severity: 'error',
      comment: 'Modules import modules, infra types and the ground layer; never ingest, inference or the composition.',
      from: { path: '^src/modules/' },
      to: { path: ['^src/(ingest|inference)/', COMPOSITION] },
    },
    {
      name: 'ingest-and-inference-point-down',
      severity: 'error',
      comment: 'Ingest and inference sit side by side above the modules; neither imports the other or the composition.',
      from: { path: '^src/(ingest|inference)/' },
      to: { path: ['^src/(ingest|inference)/', COMPOSITION], pathNot: '^src/$1/' },
    },
    {
      name: 'repo-stays-in-its-module',
      severity: 'error',
      comment: "A module reaches another through its service; a repo is built and used inside its own module only.",
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: `^src/modules/[^/]+/${REPO}`, pathNot: '^src/modules/$1/' },
    },
    {
      name: 'no-repo-outside-modules',
      severity: 'error',
      comment: 'Ingest, inference and the composition use module services, never their repos.',
      from: { path: '^src/', pathNot: '^src/modules/' },
      to: { path: `^src/modules/[^/]+/${REPO}` },
    },
    {
      name: 'people-depend-one-way',
      severity: 'error',
      comment: 'Second factors build on sign-in, sign-in on accounts: mfa -> auth -> users, never back.',
      from: { path: '^src/modules/users/' },
      to: { path: '^src/modules/(auth|mfa)/' },
    },
    {
      name: 'auth-does-not-know-mfa',
      severity: 'error',
      comment: 'Sign-in asks for a second factor through an interface (SecondFactor) the composition passes the mfa service in as, so mfa -> auth only.',
      from: { path: '^src/modules/auth/' },
      to: { path: '^src/modules/mfa/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['\\.mjs$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
