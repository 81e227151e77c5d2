// cucumber-js profile: TypeScript step definitions loaded through tsx (NODE_OPTIONS).
export default {
  paths: ['features/**/*.feature'],
  import: ['features/steps/**/*.ts', 'features/support/**/*.ts'],
  format: ['progress'],
  strict: true,
}
