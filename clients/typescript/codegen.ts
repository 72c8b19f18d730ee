// GraphQL Code Generator: typed documents for the operations written in src/ (graphql(`...`)),
// checked against schema.graphql, the SDL the server is built from.
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['src/**/*.ts', '!src/gql/**', '!src/rest/**'],
  ignoreNoDocuments: false, // no operations found is a mistake, not an empty client
  generates: {
    'src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        // Each custom scalar as it travels in JSON. Amounts stay strings: never floats.
        scalars: {
          Cursor: { input: 'string', output: 'string' },
          Decimal: { input: 'string', output: 'string' },
          JSON: { input: 'unknown', output: 'unknown' },
          StringMap: { input: 'Record<string, string>', output: 'Record<string, string>' },
          Time: { input: 'string', output: 'string' },
        },
        strictScalars: true, // a new scalar in the schema fails generation until it is mapped here
        avoidOptionals: { field: true }, // a nullable result field is always sent: T | null, not T?
        enumsAsTypes: true, // string unions: no runtime enum objects to import
        useTypeImports: true,
        emitLegacyCommonJSImports: false, // ".js" in relative imports, as NodeNext wants
      },
    },
  },
};

export default config;
