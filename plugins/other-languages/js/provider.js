// The example bootstrap provider in JavaScript (see ../README.md for what it does).
//
// componentize-js turns this module into a component of the world `bootstrap-provider`: the
// exports `metadata` and `bootstrap` implement the exported interfaces of the same names. A
// function returning a WIT `result` returns its ok value and throws `{ payload: err }` for the
// error.

const NAME = 'js-example';
const VERSION = '0.1.0';
const CONFIG_SCHEMA = JSON.stringify({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'Config',
  type: 'object',
  additionalProperties: false,
  properties: {
    timezone: {
      description: 'IANA time zone of the machines, e.g. Europe/Berlin.',
      type: 'string',
      default: 'UTC',
    },
    packages: {
      description: 'Debian packages to install on every machine.',
      type: 'array',
      items: { type: 'string' },
      default: [],
    },
  },
});

const TIMEZONE = /^[A-Za-z0-9_+\/-]{1,64}$/;
const PACKAGE = /^[a-z0-9][a-z0-9+.-]*$/;
const TOKEN = 'bootstrap-token';

/** The WIT `result` error `payload`, thrown. */
function fail(payload) {
  return { payload };
}

/** A JSON Pointer (RFC 6901) to `parts`. */
function pointer(...parts) {
  return parts.map((p) => '/' + String(p).replaceAll('~', '~0').replaceAll('/', '~1')).join('');
}

/** Every problem of a config, in document order, as field errors. */
function configProblems(text) {
  let config;
  try {
    config = JSON.parse(text);
  } catch {
    config = null;
  }
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    return [{ path: '', message: 'must be a JSON object' }];
  }
  const errors = [];
  for (const [key, value] of Object.entries(config)) {
    if (key === 'timezone') {
      if (typeof value !== 'string') {
        errors.push({ path: '/timezone', message: 'must be a string' });
      } else if (!TIMEZONE.test(value)) {
        errors.push({ path: '/timezone', message: 'must be a time zone name such as Europe/Berlin' });
      }
    } else if (key === 'packages') {
      if (!Array.isArray(value)) {
        errors.push({ path: '/packages', message: 'must be an array of strings' });
        continue;
      }
      value.forEach((item, index) => {
        if (typeof item !== 'string') {
          errors.push({ path: pointer('packages', index), message: 'must be a string' });
        } else if (!PACKAGE.test(item)) {
          errors.push({ path: pointer('packages', index), message: 'must be a Debian package name' });
        }
      });
    } else {
      errors.push({ path: pointer(key), message: 'unknown field' });
    }
  }
  return errors;
}

function invalidInput(message) {
  return fail({ code: 'invalid-input', message, retryable: false, retryAfterMs: undefined });
}

/** The call's config; a permanent error when it is not a JSON object. */
function parseConfig(ctx) {
  let config;
  try {
    config = JSON.parse(ctx.config);
  } catch {
    config = null;
  }
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw invalidInput('config: must be a JSON object');
  }
  return config;
}

export const metadata = {
  describe() {
    return {
      name: NAME,
      version: VERSION,
      description: 'Example bootstrap provider in JavaScript: cloud-config from a typed config.',
      extensionPoints: ['bootstrap'],
      configSchema: CONFIG_SCHEMA,
      capabilities: {
        controlPlaneShape: undefined,
        controlPlaneScalable: false,
        versionUpgrades: false,
      },
      requestedGrants: { httpHosts: [], secrets: [] },
    };
  },

  validateConfig(config) {
    const errors = configProblems(config);
    if (errors.length > 0) {
      throw fail(errors);
    }
  },
};

export const bootstrap = {
  clusterSecrets(ctx) {
    parseConfig(ctx);
    const token = new TextEncoder().encode('token:' + ctx.cluster.uid);
    return { tag: 'ready', val: [{ name: TOKEN, data: token }] };
  },

  generate(ctx, request) {
    const config = parseConfig(ctx);
    if (!request.secrets.some((s) => s.name === TOKEN)) {
      throw invalidInput('request.secrets: no bootstrap-token');
    }
    const { major, minor, patch } = request.version;
    const lines = [
      '#cloud-config',
      `# role: ${request.role}`,
      `# version: v${major}.${minor}.${patch}`,
      `# endpoint: ${request.endpoint.host}:${request.endpoint.port}`,
      '# members: ' + request.controlPlaneMembers.map((m) => m.name).join(','),
      'timezone: ' + (config.timezone ?? 'UTC'),
    ];
    const packages = config.packages ?? [];
    if (packages.length > 0) {
      lines.push('packages:', ...packages.map((p) => `- ${p}`));
    } else {
      lines.push('packages: []');
    }
    const data = new TextEncoder().encode(lines.join('\n') + '\n');
    return { format: 'cloud-config', data };
  },

  kubeconfig(ctx, endpoint, _secrets) {
    parseConfig(ctx);
    const name = ctx.cluster.name;
    const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
    const user = `${name}-admin`;
    const context = `${user}@${name}`;
    return [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: ${name}`,
      '  cluster:',
      `    server: https://${host}:${endpoint.port}`,
      'users:',
      `- name: ${user}`,
      '  user: {}',
      'contexts:',
      `- name: ${context}`,
      '  context:',
      `    cluster: ${name}`,
      `    user: ${user}`,
      `current-context: ${context}`,
      '',
    ].join('\n');
  },
};
