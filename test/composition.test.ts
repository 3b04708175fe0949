/**
 * The composition builds services in dependency order (docs/architecture.md "Wiring order"):
 * inside createServices no closure refers to a service built later, and nothing handed to a
 * service is filled in or rebound afterwards.
 *
 * Why a structural check of src/services.ts, and not a run-time one or a text search: a
 * forward reference hides in a closure (`(id) => fieldNotes.countOf(id)`) that runs only when a
 * request calls it, so building the hub succeeds and the mistake surfaces later as a
 * temporal-dead-zone error or a hook that was never filled; a late `hooks.push(…)` leaves no
 * trace in the built services at all. A text search breaks on formatting and cannot tell a
 * later service from a closure parameter of the same name. So the file is parsed with the
 * TypeScript compiler (one file, no imports followed, well under a second) and the checker
 * resolves every identifier to its declaration: exact scoping, nothing run. A self-test on a
 * snippet of the patterns this replaced (forward closures, a thunk, a shorthand property, a
 * hook array filled later, an object rebound later, a `let`) keeps the check from passing by
 * finding nothing.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const SERVICES = path.resolve(import.meta.dirname, '..', 'src', 'services.ts');

/** Methods that fill a container in place. */
const MUTATORS = new Set(['push', 'unshift', 'splice', 'fill', 'copyWithin', 'sort', 'reverse', 'set', 'add', 'delete', 'clear']);

interface Local {
  name: string;
  /** Index of the statement of createServices' body that declares it. */
  index: number;
  /** Where its declaration ends: a use before that, in the same statement, is a use of itself. */
  end: number;
  line: number;
  /** Declared with an array or object literal, or a new Map/Set/…: something that can be filled in. */
  container: boolean;
}

function analyse(fileName: string, text: string, fnName = 'createServices') {
  const options: ts.CompilerOptions = { noResolve: true, noLib: true, types: [], allowImportingTsExtensions: true, noEmit: true };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) =>
    path.resolve(name) === path.resolve(fileName) ? ts.createSourceFile(name, text, lang, true) : getSourceFile(name, lang, ...rest);
  host.fileExists = (name) => path.resolve(name) === path.resolve(fileName);
  host.readFile = (name) => (path.resolve(name) === path.resolve(fileName) ? text : undefined);
  const program = ts.createProgram({ rootNames: [fileName], options, host });
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(fileName)!;
  const fn = sf.statements.find((s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === fnName);
  assert.ok(fn?.body, `${fnName} not found in ${fileName}`);
  const lineOf = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;

  const locals = new Map<ts.Symbol, Local>();
  const problems: string[] = [];
  const statements = fn.body.statements;

  const bindingNames = (name: ts.BindingName): ts.Identifier[] =>
    ts.isIdentifier(name) ? [name] : name.elements.flatMap((e) => (ts.isOmittedExpression(e) ? [] : bindingNames(e.name)));
  const isContainer = (init: ts.Expression | undefined): boolean => {
    while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init)))
      init = init.expression;
    return (
      !!init &&
      (ts.isArrayLiteralExpression(init) ||
        ts.isObjectLiteralExpression(init) ||
        (ts.isNewExpression(init) &&
          ts.isIdentifier(init.expression) &&
          /^(Map|Set|WeakMap|WeakSet|Array|Object)$/.test(init.expression.text)))
    );
  };

  statements.forEach((st, index) => {
    const declare = (id: ts.Identifier, end: number, container: boolean) => {
      const sym = checker.getSymbolAtLocation(id);
      if (sym) locals.set(sym, { name: id.text, index, end, line: lineOf(id), container });
    };
    if (ts.isVariableStatement(st)) {
      const flags = st.declarationList.flags;
      for (const d of st.declarationList.declarations) {
        if (!(flags & ts.NodeFlags.Const))
          problems.push(
            `line ${lineOf(d)}: \`${d.name.getText(sf)}\` is declared with let or var; a binding of the composition is never rebound`,
          );
        for (const id of bindingNames(d.name)) declare(id, d.end, ts.isIdentifier(d.name) && isContainer(d.initializer));
      }
    } else if ((ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st)) && st.name) {
      declare(st.name, st.end, false);
    }
  });

  /** The local a reference resolves to, when it is one of createServices' own. */
  const localOf = (id: ts.Identifier): Local | undefined => {
    const sym = ts.isShorthandPropertyAssignment(id.parent)
      ? checker.getShorthandAssignmentValueSymbol(id.parent)
      : checker.getSymbolAtLocation(id);
    return sym ? locals.get(sym) : undefined;
  };
  /** The identifier at the root of `a.b[c].d`, when the expression is such a chain. */
  const rootOf = (e: ts.Expression): ts.Identifier | undefined => {
    while (
      ts.isPropertyAccessExpression(e) ||
      ts.isElementAccessExpression(e) ||
      ts.isParenthesizedExpression(e) ||
      ts.isNonNullExpression(e)
    )
      e = e.expression;
    return ts.isIdentifier(e) ? e : undefined;
  };
  const isDeclarationName = (id: ts.Identifier) => {
    const p = id.parent;
    return (
      ((ts.isVariableDeclaration(p) ||
        ts.isBindingElement(p) ||
        ts.isFunctionDeclaration(p) ||
        ts.isClassDeclaration(p) ||
        ts.isParameter(p)) &&
        p.name === id) ||
      (ts.isPropertyAccessExpression(p) && p.name === id) ||
      (ts.isPropertyAssignment(p) && p.name === id)
    );
  };

  statements.forEach((st, index) => {
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && !isDeclarationName(node)) {
        const local = localOf(node);
        if (local && (local.index > index || (local.index === index && node.getStart(sf) < local.end)))
          problems.push(`line ${lineOf(node)}: \`${local.name}\` is used before it is built (declared at line ${local.line})`);
      }
      // Filling or rebinding: `x = …`, `x.y = …`, `x.y += …`, `x.y++`, `delete x.y`.
      const target =
        ts.isBinaryExpression(node) &&
        node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
        node.operatorToken.kind <= ts.SyntaxKind.LastAssignment
          ? node.left
          : (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) &&
              (node.operator === ts.SyntaxKind.PlusPlusToken || node.operator === ts.SyntaxKind.MinusMinusToken)
            ? node.operand
            : ts.isDeleteExpression(node)
              ? node.expression
              : undefined;
      const root = target && rootOf(target);
      const assigned = root && localOf(root);
      if (assigned)
        problems.push(`line ${lineOf(node)}: \`${node.getText(sf).split('\n')[0]}\` changes \`${assigned.name}\` after it was built`);
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        // `hooks.push(…)`, `links.alerts.set(…)` on a container built here.
        const filled = ts.isPropertyAccessExpression(callee) && MUTATORS.has(callee.name.text) ? rootOf(callee.expression) : undefined;
        // `Object.assign(links, …)`, `Object.defineProperty(links, …)`.
        const assignedTo =
          ts.isPropertyAccessExpression(callee) &&
          ts.isIdentifier(callee.expression) &&
          callee.expression.text === 'Object' &&
          /^(assign|defineProperty|defineProperties|setPrototypeOf)$/.test(callee.name.text) &&
          node.arguments[0]
            ? rootOf(node.arguments[0])
            : undefined;
        for (const id of [filled, assignedTo]) {
          const local = id && localOf(id);
          if (local?.container) problems.push(`line ${lineOf(node)}: \`${local.name}\` is filled in after it was built`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(st);
  });
  return { problems, locals: locals.size };
}

describe('composition: services built in dependency order', () => {
  test('the check finds each pattern it exists to forbid', () => {
    const snippet = `
      declare function make(deps: unknown): any;
      export function createServices(infra: any) {
        const hooks: Array<() => void> = [];
        const a = make({ onSaved: hooks, b: (id: string) => b.count(id), c: () => c.secondFactor });
        const links = { alerts: async () => 0 };
        const b = make({ links, a });
        const c = make({ a, later });
        const later = make({});
        hooks.push(() => later.drop());
        links.alerts = later.count;
        let rebound = make({});
        rebound = make({ rebound });
        const fine = make({ a, b, c, run: (later: number) => later + 1 });
        return { a, b, c, fine };
      }`;
    const { problems } = analyse(path.resolve('snippet.ts'), snippet);
    const expected = [
      /`b` is used before it is built/,
      /`c` is used before it is built/,
      /`later` is used before it is built/,
      /`hooks` is filled in after it was built/,
      /changes `links` after it was built/,
      /`rebound` is declared with let or var/,
      /changes `rebound` after it was built/,
    ];
    for (const re of expected)
      assert.ok(
        problems.some((p) => re.test(p)),
        `expected ${re} among:\n${problems.join('\n')}`,
      );
    // The parameter named `later` in `fine` is not the service built later.
    assert.ok(!problems.some((p) => /line 15/.test(p)), problems.join('\n'));
  });

  test('src/services.ts: no closure over a later service, no hook filled or rebound later', () => {
    const { problems, locals } = analyse(SERVICES, fs.readFileSync(SERVICES, 'utf8'));
    assert.ok(locals > 40, `only ${locals} declarations found in createServices: is the check still reading it?`);
    assert.deepEqual(problems, [], `docs/architecture.md "Wiring order":\n${problems.join('\n')}`);
  });
});
