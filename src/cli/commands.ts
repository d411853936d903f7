/** `voxd`'s commands: serve, keys, models, and one command per operation over the same services as the HTTP API. */
import { Command, Option } from 'commander';
import { createWriteStream } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseScopes } from '../auth/api-keys.js';
import { ConfigError, loadConfig, roles, type Config } from '../config.js';
import { createContainer, type Container } from '../container.js';
import { VoxError } from '../core/errors.js';
import type { OperationContext, OperationResult } from '../core/operation-context.js';
import { createLogger } from '../core/logger.js';
import { builtinAnalysisModels, type ModelSpec, voiceModelsFor } from '../models/catalog/index.js';
import { audioFormats } from '../audio/encode.js';
import { contractFields } from '../core/contract-fields.js';
import { emotions } from '../operations/synthesize/emotion.js';
import { synthesizeContract } from '../operations/synthesize/contract.js';
import { transcriptionResponseFormats, type TranscriptionResponseFormat } from '../operations/transcribe/contract.js';
import { scopes } from '../core/records.js';
import { version } from '../core/version.js';
import { jobsCommand } from './jobs.js';
import { progressBar, stepProgress, type ProgressBar } from './progress.js';

const print = (text: string): void => void process.stdout.write(`${text}\n`);
// Output piped into a reader that stops early (`voxd models list | head`) ends the command quietly.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(0);
});

async function withContainer<T>(work: (container: Container, config: Readonly<Config>) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const container = await createContainer(config);
  try {
    return await work(container, config);
  } finally {
    await container.close();
  }
}

/** A request context for running an operation on local files, as the CLI user (all scopes), with a progress bar. */
function localContext(container: Container, files: Record<string, string>, bar: ProgressBar): OperationContext {
  const logger = createLogger(container.config.logLevel === 'info' ? 'warn' : container.config.logLevel);
  const uploads = new Map(
    Object.entries(files).map(([field, file]) => [
      field,
      [{ field, path: path.resolve(file), filename: path.basename(file), mimetype: '', bytes: 0 }],
    ]),
  );
  const now = new Date().toISOString();
  return {
    requestId: `cli_${process.pid}`,
    apiKey: {
      id: 'cli',
      name: 'cli',
      hash: '',
      prefix: '',
      scopes: [...scopes],
      createdAt: now,
      lastUsedAt: now,
      revokedAt: null,
      webhookSecret: '',
    },
    signal: new AbortController().signal,
    inputs: uploads,
    log: logger,
    onProgress: (progress) => bar.update(progress),
  };
}

/** Runs an operation in this process with a progress bar, which is gone before the output is written. */
async function runLocal(
  container: Container,
  files: Record<string, string>,
  run: (context: OperationContext) => Promise<OperationResult>,
): Promise<OperationResult> {
  const bar = progressBar();
  try {
    return await run(localContext(container, files, bar));
  } finally {
    bar.stop();
  }
}

async function output(result: OperationResult, outPath: string | undefined): Promise<void> {
  switch (result.kind) {
    case 'json':
      print(JSON.stringify(result.body, null, 2));
      return;
    case 'text':
      print(result.body);
      return;
    case 'audio':
      if (!outPath) throw new VoxError('invalid_request', 'Audio output needs --out FILE.');
      await writeFile(outPath, result.bytes);
      print(`wrote ${outPath} (${result.bytes.length} bytes)`);
      return;
    case 'stream': {
      if (!outPath) throw new VoxError('invalid_request', 'This output is a file: give --out FILE.');
      await pipeline(result.stream, createWriteStream(outPath));
      print(`wrote ${outPath} (${(await stat(outPath)).size} bytes)`);
      return;
    }
  }
}

const program = new Command('voxd').version(version).description('Self-hosted speech service');

program
  .command('serve')
  .description('Start the service: API and job worker (role all), the API only, or a job worker only')
  .addOption(
    new Option('--role <role>', 'all: API + worker; api: HTTP API, no models (needs workers); worker: jobs only, no HTTP').choices(roles),
  )
  .option('--operations <list>', "operations this node's worker takes (comma list of tts, vc, separate, transcribe, dub; default all)")
  .action(async (o: { role?: string; operations?: string }) => {
    // Flags override the environment (VOXD_ROLE, VOXD_WORKER_OPERATIONS).
    const config = loadConfig({
      ...process.env,
      ...(o.role ? { VOXD_ROLE: o.role } : {}),
      ...(o.operations ? { VOXD_WORKER_OPERATIONS: o.operations } : {}),
    });
    // Imported here: the HTTP stack cost every other command about 0.2 s of CPU at start (issue 35).
    const { serve } = await import('../server.js');
    await serve(config, createLogger(config.logLevel));
  });

const keys = program.command('keys').description('Manage API keys');
keys
  .command('create')
  .requiredOption('--name <name>', 'who or what uses the key')
  .option('--scopes <list>', `comma list of ${scopes.join(', ')}`, scopes.filter((s) => s !== 'admin' && s !== 'metrics').join(','))
  .description('Create a key and print it (shown only once)')
  .action((options: { name: string; scopes: string }) =>
    withContainer(async ({ apiKeys }) => {
      const created = await apiKeys.create(options.name, parseScopes(options.scopes));
      print(created.key);
      process.stderr.write(
        `id ${created.record.id}, scopes ${created.record.scopes.join(',')}: store the key now, it is not shown again\n`,
      );
      process.stderr.write(`webhook signing secret: ${created.record.webhookSecret} (also at GET /v1/webhook-secret with the key)\n`);
    }),
  );
keys
  .command('list')
  .description('List keys (never the keys themselves)')
  .action(() =>
    withContainer(async ({ apiKeys }) => {
      for (const k of await apiKeys.list()) {
        print(
          [
            k.id,
            `${k.prefix}...`,
            k.name,
            k.scopes.join(','),
            `created ${k.createdAt}`,
            `last used ${k.lastUsedAt ?? 'never'}`,
            k.revokedAt ? `REVOKED ${k.revokedAt}` : 'active',
          ].join('\t'),
        );
      }
    }),
  );
keys
  .command('revoke <id>')
  .description('Revoke a key')
  .action((id: string) =>
    withContainer(async ({ apiKeys }) => {
      await apiKeys.revoke(id);
      print(`revoked ${id}`);
    }),
  );

/** The voice models of each language asked for (a comma list of `de`, `de-de`, `de_DE`), best first; an unknown one is an error. */
function voiceModelsAskedFor(languages: string, catalog: readonly ModelSpec[]): ModelSpec[][] {
  return languages
    .split(',')
    .map((language) => language.trim())
    .filter((language) => language.length > 0)
    .map((language) => {
      const found = voiceModelsFor(language, catalog);
      if (found.length === 0) {
        const known = [...new Set(catalog.flatMap((spec) => (spec.voice ? [spec.voice.language] : [])))].sort();
        throw new VoxError(
          'not_found',
          `No voice model in the catalog speaks '${language}'. Voice models' languages: ${known.join(', ')}.`,
          {
            param: 'tts-language',
          },
        );
      }
      return found;
    });
}

const models = program.command('models').description('Manage models');
models
  .command('list')
  .description('Catalog and install state: id, task, state, size, language and quality (voice models), licence, description')
  .option('--tts-language <codes>', 'only the voice models of these languages (comma list: de, de-de, de_DE), best first')
  .action((options: { ttsLanguage?: string }) =>
    withContainer(async ({ models: manager }) => {
      const statuses = await manager.list();
      const shown = options.ttsLanguage
        ? voiceModelsAskedFor(options.ttsLanguage, manager.catalog).flatMap((specs) =>
            specs.map((spec) => statuses.find((m) => m.id === spec.id)!),
          )
        : statuses;
      for (const m of shown) {
        print(
          [
            m.id,
            m.task,
            m.installed ? 'installed' : 'missing',
            `${(m.bytes / 1e6).toFixed(1)} MB`,
            m.language ?? '-',
            m.quality ?? '-',
            m.license,
            m.description,
          ].join('\t'),
        );
      }
    }),
  );
models
  .command('pull [ids...]')
  .description(
    'Fetch, convert and verify models (default: every model but the optional voices, which are pulled by id or --tts-language; ' +
      '--needed: those the enabled operations load)',
  )
  .option('--force', 're-fetch even if installed')
  .option('--needed', 'also every model that the operations this node runs load (what setup pulls)')
  .option('--tts-language <codes>', 'also the best voice model of each of these languages (comma list: de, de-de, de_DE)')
  .action((ids: string[], options: { force?: boolean; needed?: boolean; ttsLanguage?: string }) =>
    withContainer(async (container) => {
      const manager = container.models;
      const voices = options.ttsLanguage ? voiceModelsAskedFor(options.ttsLanguage, manager.catalog).map(([best]) => best!) : [];
      for (const voice of voices)
        process.stderr.write(
          `${voice.id}: ${voice.voice!.languageName}, ${voice.voice!.quality} quality, the best voice of its language\n`,
        );
      const wanted = [...new Set([...(options.needed ? container.neededModels() : []), ...ids, ...voices.map((v) => v.id)])];
      // Voice models are one of many per language: a user picks them, `models pull` alone does not fetch all of them.
      // --needed on a node that loads none (an API-only node) pulls nothing, not everything.
      if (wanted.length === 0 && !options.needed) wanted.push(...manager.catalog.filter((s) => !s.voice).map((s) => s.id));
      const steps = stepProgress('models', wanted.length);
      for (const [index, id] of wanted.entries()) {
        try {
          await manager.pull(id, { force: options.force ?? false, log: (message) => steps.update(index, message) });
        } catch (error) {
          steps.stop(`models: ${index} of ${wanted.length} installed and verified; ${id} failed`);
          throw error;
        }
      }
      steps.stop(`models: ${wanted.length} installed and verified`);
      // What depends only on these models (built-in voices' speaker embeddings) is computed now, not by the first requests.
      if (wanted.some((id) => builtinAnalysisModels.includes(id) || manager.spec(id).voice)) {
        const installed = new Set((await manager.list()).filter((m) => m.installed).map((m) => m.id));
        const missing = builtinAnalysisModels.filter((id) => !installed.has(id));
        if (missing.length > 0)
          steps.stop(`built-in voices not analysed yet: ${missing.join(', ')} not installed (the server does it at start once they are)`);
        else {
          const voices = stepProgress('built-in voices', 0);
          const startedAt = performance.now();
          const analysed = await container.operations.synthesis.prepareBuiltinVoices({
            onVoice: (done, total, message) => voices.update(done, message, total),
          });
          voices.stop(
            `built-in voices (Kokoro's English ones, installed Piper voices): ${analysed} analysed in ${((performance.now() - startedAt) / 1000).toFixed(0)} s, ` +
              `the others already were (Kokoro's other languages: on first use)`,
          );
        }
      }
    }),
  );
models
  .command('export <file> [ids...]')
  .description('Write installed, verified models (default: all installed) and their manifest to a .tar.gz, for hosts without network')
  .option('--needed', 'also every model that the operations this node runs load (what `pull --needed` installs)')
  .action((file: string, ids: string[], options: { needed?: boolean }) =>
    withContainer(async (container) => {
      // With --needed the archive holds that set alone, not whatever else this host happens to have installed.
      const wanted = [...new Set([...(options.needed ? container.neededModels() : []), ...ids])];
      if (options.needed && wanted.length === 0)
        throw new VoxError('invalid_request', 'This node loads no models (an API-only node): nothing to export.', { param: 'needed' });
      await container.models.exportArchive(path.resolve(file), wanted, (m) => process.stderr.write(`${m}\n`));
    }),
  );
models
  .command('import <file>')
  .description('Install the models of an archive made by `voxd models export` (each checked against the catalog)')
  .action((file: string) =>
    withContainer(async ({ models: manager }) => {
      await manager.importArchive(path.resolve(file), (m) => process.stderr.write(`${m}\n`));
    }),
  );
models
  .command('verify [ids...]')
  .description('Re-hash installed models')
  .action((ids: string[]) =>
    withContainer(async ({ models: manager }) => {
      let failed = false;
      const wanted = ids.length > 0 ? ids : (await manager.list()).filter((m) => m.installed).map((m) => m.id);
      for (const id of wanted) {
        const problems = await manager.verify(id);
        print(`${id}\t${problems.length === 0 ? 'ok' : problems.join('; ')}`);
        failed ||= problems.length > 0;
      }
      if (failed) process.exitCode = 1;
    }),
  );

program
  .command('transcribe <file>')
  .description('Transcribe a local file')
  .option('--language <code>', 'language or auto', 'auto')
  .option('--diarize', 'label speakers')
  .addOption(new Option('--format <format>', 'response format').choices(transcriptionResponseFormats).default('json'))
  .action((file: string, o: { language: string; diarize?: boolean; format: TranscriptionResponseFormat }) =>
    withContainer(async (container) => {
      await output(
        await runLocal(container, { audio: file }, (context) =>
          container.operations.transcription.transcribe(
            { language: o.language, diarize: o.diarize ?? false, response_format: o.format },
            context,
          ),
        ),
        undefined,
      );
    }),
  );
program
  .command('tts <text>')
  .description('Speak text into a file')
  .requiredOption('--voice <id>', 'voice profile id')
  .requiredOption('--out <file>', 'output file')
  .option('--language <code>')
  .addOption(new Option('--emotion <name>').choices(emotions))
  .addOption(new Option('--format <format>').choices(audioFormats).default('mp3'))
  .action((text: string, o: { voice: string; out: string; language?: string; emotion?: string; format: string }) =>
    withContainer(async (container) => {
      const fields = contractFields(synthesizeContract, {
        text,
        voice_id: o.voice,
        language: o.language,
        emotion: o.emotion,
        format: o.format,
      });
      await output(await runLocal(container, {}, (context) => container.operations.synthesis.synthesize(fields, context)), o.out);
    }),
  );
program
  .command('vc <file>')
  .description('Re-voice a local file')
  .requiredOption('--voice <id>', 'target voice profile id')
  .requiredOption('--out <file>', 'output file')
  .option('--flatten-emotion', 'use the target’s neutral range')
  .action((file: string, o: { voice: string; out: string; flattenEmotion?: boolean }) =>
    withContainer(async (container) => {
      await output(
        await runLocal(container, { audio: file }, (context) =>
          container.operations.conversion.convert({ target_voice_id: o.voice, preserve_emotion: !o.flattenEmotion }, context),
        ),
        o.out,
      );
    }),
  );
program
  .command('separate <file>')
  .description('Split a local soundtrack into stems')
  .option('--stems <list>', 'dialogue,music,sfx,ambience')
  .option('--out <file>', 'zip archive to write')
  .action((file: string, o: { stems?: string; out?: string }) =>
    withContainer(async (container) => {
      await output(
        await runLocal(container, { audio: file }, (context) =>
          container.operations.separation.separate({ stems: o.stems, response_format: o.out ? 'zip' : 'json' }, context),
        ),
        o.out,
      );
    }),
  );

program.addCommand(jobsCommand());

program.parseAsync().catch((error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`voxd: invalid configuration: ${error.message}\n`);
  else if (error instanceof VoxError) process.stderr.write(`voxd: ${error.code}: ${error.message}\n`);
  else process.stderr.write(`voxd: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = error instanceof ConfigError ? 78 : 1;
});
