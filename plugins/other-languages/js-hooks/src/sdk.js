// The SDK, by one path for the whole provider. componentize-js resolves relative imports only
// (no package lookup), so the SDK is named by its place in the repository; a provider outside
// it changes this line to where its copy of @capw/sdk lies (e.g. under node_modules).
export * from '../../../../sdk/js/src/index.js';
