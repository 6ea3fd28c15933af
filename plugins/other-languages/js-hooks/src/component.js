// The component's entry: the exports of the contract's `provider` world for js-hooks. Only the
// component imports it (its imports exist inside a componentize-js build alone); the unit
// tests import provider.js.
import { exportProvider } from '../../../../sdk/js/src/component.js';
import { provider } from './provider.js';

export const { metadata, infrastructure, bootstrap, controlPlane, lifecycleHooks } = exportProvider(provider);
