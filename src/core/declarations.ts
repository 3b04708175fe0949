import { ACTIONS } from './actions.ts';
import { type Permission, RESOURCES, type RouteSchema, type TeamSource } from './permissions.ts';

/** A route's declaration, with its request schema when it has one (routes outside the module lists have none). */
export type Declaration = Permission & { schema?: RouteSchema };

const KNOWN_ACTIONS: ReadonlySet<string> = new Set(ACTIONS);
const KNOWN_RESOURCES: ReadonlySet<string> = new Set(RESOURCES);

/** The property names a request-part schema declares, or null when it declares none we can read (absent, a record, a union). */
function propertiesOf(schema: unknown): ReadonlySet<string> | null {
  if (!schema || typeof schema !== 'object') return null;
  const props = (schema as { properties?: unknown }).properties;
  return props && typeof props === 'object' ? new Set(Object.keys(props)) : null;
}

function keyProblem(d: Declaration, part: 'query' | 'body' | 'params', key: string, what: string): string | null {
  const props = propertiesOf(d.schema?.[part === 'query' ? 'querystring' : part]);
  return props && !props.has(key) ? `${what} reads ${part}.${key}, which the route's ${part} schema does not declare` : null;
}

function teamProblems(d: Declaration, team: TeamSource | undefined): string[] {
  if (!team) return [];
  if ('resource' in team) {
    if (!KNOWN_RESOURCES.has(team.resource)) return [`its team comes from resource "${team.resource}", which is not in RESOURCES`];
    const problem =
      team.param !== undefined
        ? keyProblem(d, 'params', team.param, 'its team source')
        : keyProblem(d, 'query', team.query, 'its team source');
    return problem ? [problem] : [];
  }
  const problem = keyProblem(d, team.in, team.key, 'its team source');
  return problem ? [problem] : [];
}

function problemsOf(d: Declaration): string[] {
  const problems: string[] = [];
  if (!KNOWN_ACTIONS.has(d.action)) problems.push(`its action "${d.action}" is not in ACTIONS`);
  for (const rule of [d, ...(d.variants ?? [])]) {
    if ((rule.access.kind === 'role' || rule.access.kind === 'device') && !rule.team) {
      problems.push('a role-based route must declare how its team is found');
    }
    // The guard lets anybody through a public rule without looking for a team, so its handler gets none.
    if (rule.access.kind === 'public' && rule.team) problems.push('a public route cannot name a team');
    problems.push(...teamProblems(d, rule.team));
  }
  for (const v of d.variants ?? []) {
    const problem = keyProblem(d, 'query', v.when.query, 'a variant');
    if (problem) problems.push(problem);
  }
  return problems;
}

/**
 * Refuses, at start, declarations the guard would only trip over at the first request: an
 * action not declared in ACTIONS or used twice, a team resource without a resolver, a team
 * or variant key the route's schema does not have, a role-based route with no team source, a
 * public one with a team source.
 */
export function checkDeclarations(declarations: readonly Declaration[]): void {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const d of declarations) {
    const where = `${d.method} ${d.url}`;
    for (const p of problemsOf(d)) problems.push(`${where}: ${p}`);
    const first = seen.get(d.action);
    if (first) problems.push(`${where}: its action "${d.action}" is already declared by ${first}`);
    else seen.set(d.action, where);
  }
  if (problems.length > 0) throw new Error(`Bad route declarations:\n- ${problems.join('\n- ')}`);
}
