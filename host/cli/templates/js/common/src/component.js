// The component's entry: componentize-js builds this module (`make`). It exports the
// contract's five interfaces; the SDK answers `unsupported` for the points the provider does
// not serve. Only a component can load it: the unit tests import provider.js instead.
import { exportProvider } from '../node_modules/@capw/sdk/src/component.js';
import { provider } from './provider.js';

export const { metadata, infrastructure, bootstrap, controlPlane, lifecycleHooks } = exportProvider(provider);
