/** What the web studio's browser tests share: Debian's Chromium against a real server, tabs that collect console errors, screenshots. */
import path from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type Locator, type Page } from 'playwright-core';
import { listen, makeTempDir, type TestApp } from '../helpers/app.js';

const chromiumPath = '/usr/bin/chromium';
const flags = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];
/** What Chromium logs for an API answer of 4xx: expected when a test provokes one, an error anywhere else. */
export const failedResource = /^Failed to load resource: the server responded with a status of (400|401)/;
const screenshots = makeTempDir('web-screenshots');

/** A browser on one test server's studio; close() ends the browser (the server stays with its test). */
export interface Studio {
  /** A fresh tab on the studio, collecting what the console reports as errors; `key` is pasted unless it is null. */
  open(options?: { key?: string | null; width?: number }): Promise<{ page: Page; consoleErrors: string[] }>;
  close(): Promise<void>;
}

/** Starts the server listening and Debian's Chromium; `extraFlags`: e.g. Chromium's fake microphone. */
export async function startStudio(server: TestApp, extraFlags: string[] = []): Promise<Studio> {
  const origin = `http://${await listen(server)}`;
  const browser = await chromium.launch({ executablePath: chromiumPath, args: [...flags, ...extraFlags] });
  return {
    async open({ key = server.key, width = 1280 } = {}) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      const consoleErrors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') consoleErrors.push(message.text());
      });
      page.on('pageerror', (error) => consoleErrors.push(String(error)));
      await page.goto(`${origin}/`);
      if (key !== null) await useKey(page, key);
      return { page, consoleErrors };
    },
    close: () => browser.close(),
  };
}

async function useKey(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Use key' }).click();
}

export async function screenshot(t: TestContext, page: Page, name: string): Promise<void> {
  const file = path.join(screenshots, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  t.diagnostic(`screenshot: ${file}`);
}

/** Resolves once the element knows its duration. */
export const durationOf = (audio: Locator): Promise<number> =>
  audio.evaluate((element: HTMLAudioElement) =>
    element.readyState >= 1
      ? element.duration
      : new Promise<number>((resolve) => element.addEventListener('loadedmetadata', () => resolve(element.duration), { once: true })),
  );

/** RMS of the audio an element plays or a link downloads, decoded by the browser from those bytes. */
export const rmsOf = (audioOrLink: Locator): Promise<number> =>
  audioOrLink.evaluate(async (element: HTMLAudioElement | HTMLAnchorElement) => {
    const url = element instanceof HTMLAnchorElement ? element.href : element.src;
    const buffer = await new OfflineAudioContext(1, 1, 24000).decodeAudioData(await (await fetch(url)).arrayBuffer());
    const samples = buffer.getChannelData(0);
    return Math.sqrt(samples.reduce((sum, x) => sum + x * x, 0) / samples.length);
  });

/** Form controls a screen reader would announce without a name. */
export const unlabelledControls = (page: Page): Promise<string[]> =>
  page.evaluate(() =>
    [...document.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('input, select, textarea')]
      .filter((control) => control.labels?.length === 0 && !control.getAttribute('aria-label'))
      .map((control) => control.outerHTML),
  );
