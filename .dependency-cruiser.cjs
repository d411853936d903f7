/**
 * The layers of src/, lowest first: a module imports from its own layer or lower ones, never from a higher one, and no
 * imports go round in a circle. Checked by `npm run lint` (dependency-cruiser).
 */
const layers = [
  { name: 'core', paths: ['^src/core/'] },
  { name: 'audio, models, storage, auth', paths: ['^src/audio/', '^src/models/', '^src/storage/', '^src/auth/'] },
  { name: 'speakers', paths: ['^src/speakers/'] },
  { name: 'voices, files, lexicons', paths: ['^src/voices/', '^src/files/', '^src/lexicons/'] },
  { name: 'an operation', paths: ['^src/operations/[^/]+/'] },
  { name: 'operation runners', paths: ['^src/operations/[^/]+[.]ts$'] },
  { name: 'jobs', paths: ['^src/jobs/'] },
  { name: 'composition root', paths: ['^src/container[.]ts$', '^src/config[.]ts$'] },
  { name: 'http', paths: ['^src/http/'] },
  { name: 'entry points', paths: ['^src/server[.]ts$', '^src/main[.]ts$', '^src/cli/'] },
];

module.exports = {
  forbidden: [
    ...layers.slice(0, -1).map((layer, index) => ({
      name: `no-climb-from-${layer.name.replace(/[^a-z]+/g, '-')}`,
      comment: `${layer.name} imports only from its own layer or lower ones`,
      severity: 'error',
      from: { path: layer.paths },
      to: { path: layers.slice(index + 1).flatMap((higher) => higher.paths) },
    })),
    {
      name: 'no-circular',
      comment: 'imports do not go round in a circle',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'in-layers',
      comment: 'every module of src/ belongs to a layer above',
      severity: 'error',
      from: { path: '^src/', pathNot: layers.flatMap((layer) => layer.paths) },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    // Type-only imports count: a type pulled from above ties the layers as much as a value.
    exclude: { path: '^(dist|web|node_modules)/' },
  },
};
