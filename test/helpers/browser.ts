/**
 * What the dashboard's browser tests share: Debian's headless Chromium (playwright-core), the
 * skip reason when it is missing, browser contexts that record every Content-Security-Policy
 * violation (none may occur), and signing in with a password.
 */
import fs from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { TestUser } from './factories.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const skip = fs.existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is not installed (apt-get install chromium); the dashboard e2e tests need it`;

/** Chromium with the flags the tests need (no sandbox in containers, audio without a gesture). */
export async function launchChromium(args: string[] = []): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', ...args] });
}

/** Content-Security-Policy violations reported by any page of a watched context: none may occur. */
export const cspViolations: string[] = [];

/** A browser context whose pages report every CSP violation (the DOM event and Chromium's console report). */
export async function newWatchedContext(browser: Browser, options: Parameters<Browser['newContext']>[0]): Promise<BrowserContext> {
  const ctx = await browser.newContext(options);
  await ctx.exposeBinding('__reportCspViolation', (_source, text: string) => void cspViolations.push(text));
  await ctx.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { __reportCspViolation(text: string): void }).__reportCspViolation;
      report(`${e.effectiveDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  ctx.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  return ctx;
}

/** A fresh watched context of `browser` on `baseURL`, signed in with `u`'s password (no second factor). */
export async function signedIn(
  browser: Browser,
  baseURL: string,
  u: TestUser,
  options: Parameters<Browser['newContext']>[0] = {},
): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await newWatchedContext(browser, { baseURL, ...options });
  const page = await ctx.newPage();
  await page.goto('/sign-in');
  await page.getByLabel('Email').fill(u.email);
  await page.getByLabel('Password').fill(u.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return { ctx, page };
}
