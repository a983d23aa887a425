// The public API's reports (api/*.api.md): api-extractor reads the declarations of each entry point and writes
// what it exports, so a change to the surface shows in review. `npm run api` rewrites the reports; the test
// (test/kit/package.test.ts, on the analysis the release artifact's declarations are rolled up from) fails when a
// report is not what the declarations give.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel, type ExtractorMessage } from '@microsoft/api-extractor';

/** The entry points: the export path, its declaration, the report's name. */
export const API_ENTRIES = [
  { path: '.', types: 'api/index.d.ts', report: 'hfi1-sdma' },
  { path: './emulator', types: 'api/emulator.d.ts', report: 'hfi1-sdma-emulator' },
  { path: './progress', types: 'api/progress.d.ts', report: 'hfi1-sdma-progress' },
  { path: './contract', types: 'api/contract.d.ts', report: 'hfi1-sdma-contract' },
] as const;

/** Emit the declarations of the entry points into dist/types. */
export function emitDeclarations(root: string): void {
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.api.json')], {
    stdio: 'inherit',
  });
}

/** What the check found: the entries whose report differs, and the types the surface reaches but no entry exports. */
export interface ApiCheck {
  changed: string[];
  /** `<entry>: <message>` for each type a caller meets and cannot import by name. */
  forgotten: string[];
}

/** Check (or, with `update`, rewrite) every report; returns the entries whose report differs and the forgotten exports. */
export function checkReports(root: string, update: boolean): ApiCheck {
  return extract(root, { update, rollupDir: null });
}

/**
 * Write one self-contained declaration file per entry point into `outDir` (`<report>.d.ts`: what it exports and
 * every type that reaches, nothing else), for the release artifact. Returns what checkReports(root, false) returns:
 * the reports are checked on the same analysis.
 */
export function rollUpDeclarations(root: string, outDir: string): ApiCheck {
  return extract(root, { update: false, rollupDir: outDir });
}

function extract(root: string, o: { update: boolean; rollupDir: string | null }): ApiCheck {
  const { update } = o;
  const changed: string[] = [];
  const forgotten: string[] = [];
  const temp = join(root, 'dist/api-report');
  mkdirSync(temp, { recursive: true });
  mkdirSync(join(root, 'api'), { recursive: true });
  const configs = API_ENTRIES.map((e) => ({
    e,
    config: ExtractorConfig.prepare({
      configObject: {
        projectFolder: root,
        mainEntryPointFilePath: join(root, 'dist/types', e.types),
        compiler: {
          overrideTsconfig: {
            compilerOptions: {
              lib: ['ES2023'],
              types: ['node'],
              strict: true,
              skipLibCheck: true,
              module: 'NodeNext',
              moduleResolution: 'NodeNext',
            },
            files: [join(root, 'dist/types', e.types)],
          },
        },
        apiReport: {
          enabled: true,
          reportFileName: `${e.report}.api.md`,
          reportFolder: join(root, 'api'),
          reportTempFolder: temp,
        },
        docModel: { enabled: false },
        dtsRollup: o.rollupDir ? { enabled: true, untrimmedFilePath: join(o.rollupDir, `${e.report}.d.ts`) } : { enabled: false },
        tsdocMetadata: { enabled: false },
        messages: {
          extractorMessageReporting: {
            default: { logLevel: ExtractorLogLevel.None },
            // A type the surface reaches that no entry point exports: a caller could not name it.
            'ae-forgotten-export': { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: false },
            'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          },
          tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None, addToApiReportFile: false } },
          compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
        },
      },
      configObjectFullPath: join(root, 'api-extractor.json'),
      packageJsonFullPath: join(root, 'package.json'),
    }),
  }));
  // One program for every entry point: the declarations are analysed once.
  const first = configs[0]?.config as ExtractorConfig;
  const compilerState = CompilerState.create(first, {
    additionalEntryPoints: configs.map((c) => c.config.mainEntryPointFilePath),
  });
  for (const { e, config } of configs) {
    const result = Extractor.invoke(config, {
      compilerState,
      localBuild: update,
      showVerboseMessages: false,
      messageCallback: (m: ExtractorMessage) => {
        if (m.messageId === 'ae-forgotten-export') forgotten.push(`${e.report}: ${m.text}`);
        else if (m.category === 'Compiler' && m.logLevel !== ExtractorLogLevel.None) process.stderr.write(`${m.text}\n`);
        m.handled = true;
      },
    });
    if (result.apiReportChanged) changed.push(e.report);
  }
  return { changed, forgotten };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  emitDeclarations(root);
  const { changed, forgotten } = checkReports(root, true);
  process.stdout.write(
    changed.length ? `updated api/${changed.join('.api.md, api/')}.api.md\n` : 'the API reports are current\n',
  );
  if (forgotten.length) {
    process.stderr.write(`types the surface reaches that no entry point exports:\n  ${forgotten.join('\n  ')}\n`);
    process.exitCode = 1;
  }
}
