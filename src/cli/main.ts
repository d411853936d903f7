#!/usr/bin/env node
/**
 * `voxd` (commands.ts). V8's compile cache (in the system's temporary directory; NODE_COMPILE_CACHE moves it,
 * NODE_DISABLE_COMPILE_CACHE turns it off) is on before the commands' modules load: compiling them again on every run cost
 * each command about 0.15 s of CPU, a third of a 1 s clip's transcription without the models (issue 35).
 */
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./commands.js');
