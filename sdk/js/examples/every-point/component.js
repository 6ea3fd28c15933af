// The component's entry (sdk/js: `make example`).
import { exportProvider } from '../../src/component.js';
import { provider } from './provider.js';

export const { metadata, infrastructure, bootstrap, controlPlane, lifecycleHooks } = exportProvider(provider);
