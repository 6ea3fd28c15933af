//! Registry credentials, taken as a value so any secret store (local files, Kubernetes
//! Secrets) can supply them.
//!
//! A secret's keys are read in this order:
//! - `.dockerconfigjson` (the `kubernetes.io/dockerconfigjson` type): the entry of `auths`
//!   for the registry, with `username`/`password`, or `auth` (base64 of `user:password`), or
//!   `registrytoken` (a bearer token);
//! - `token`: a bearer token;
//! - `username` and `password`: basic authentication.

use std::collections::BTreeMap;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use oci_client::secrets::RegistryAuth;
use serde::Deserialize;

/// The keys of a secret that [`Credentials::from_secret`] reads.
pub const CREDENTIAL_KEYS: [&str; 4] = [".dockerconfigjson", "token", "username", "password"];

/// How to authenticate to a registry. `Debug` never shows a password or token.
#[derive(Clone, Default, PartialEq, Eq)]
pub enum Credentials {
    /// No credentials.
    #[default]
    Anonymous,
    /// HTTP basic authentication.
    Basic { username: String, password: String },
    /// A bearer token, sent as is.
    Bearer(String),
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credentials::Anonymous => f.write_str("Anonymous"),
            Credentials::Basic { username, .. } => f
                .debug_struct("Basic")
                .field("username", username)
                .field("password", &"<redacted>")
                .finish(),
            Credentials::Bearer(_) => f.write_str("Bearer(<redacted>)"),
        }
    }
}

/// A secret that holds no usable credentials for the registry.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    /// None of the known keys is present.
    #[error(
        "no credentials in the secret: expected .dockerconfigjson, token, or username and password"
    )]
    NoKnownKey,
    /// `.dockerconfigjson` is not valid JSON of the expected shape.
    #[error(".dockerconfigjson is not a docker config")]
    DockerConfig(#[source] serde_json::Error),
    /// `.dockerconfigjson` has no entry for the registry.
    #[error(".dockerconfigjson has no entry for registry {registry:?}")]
    NoEntry { registry: String },
    /// An entry or key is not usable (bad base64, no colon, not UTF-8...).
    #[error("{what} is malformed")]
    Malformed { what: &'static str },
}

#[derive(Deserialize)]
struct DockerConfig {
    #[serde(default)]
    auths: BTreeMap<String, DockerAuth>,
}

#[derive(Deserialize)]
struct DockerAuth {
    username: Option<String>,
    password: Option<String>,
    auth: Option<String>,
    registrytoken: Option<String>,
}

impl Credentials {
    /// The credentials for `registry` (host, or host:port) in a secret's keys.
    ///
    /// # Errors
    ///
    /// [`CredentialsError`] when the secret holds none of the known keys or a malformed one.
    pub fn from_secret(
        keys: &BTreeMap<String, Vec<u8>>,
        registry: &str,
    ) -> Result<Self, CredentialsError> {
        let text = |key: &str, what| {
            keys.get(key)
                .map(|v| {
                    std::str::from_utf8(v)
                        .map(|s| s.trim_end_matches(['\n', '\r']).to_owned())
                        .map_err(|_| CredentialsError::Malformed { what })
                })
                .transpose()
        };
        if let Some(json) = keys.get(".dockerconfigjson") {
            return Self::from_docker_config(json, registry);
        }
        if let Some(token) = text("token", "token")? {
            return Ok(Credentials::Bearer(token));
        }
        match (text("username", "username")?, text("password", "password")?) {
            (Some(username), Some(password)) => Ok(Credentials::Basic { username, password }),
            _ => Err(CredentialsError::NoKnownKey),
        }
    }

    fn from_docker_config(json: &[u8], registry: &str) -> Result<Self, CredentialsError> {
        let config: DockerConfig =
            serde_json::from_slice(json).map_err(CredentialsError::DockerConfig)?;
        let entry = config
            .auths
            .iter()
            .find(|(host, _)| registry_host(host) == registry)
            .map(|(_, e)| e)
            .ok_or_else(|| CredentialsError::NoEntry {
                registry: registry.to_owned(),
            })?;
        if let Some(token) = &entry.registrytoken {
            return Ok(Credentials::Bearer(token.clone()));
        }
        if let (Some(username), Some(password)) = (&entry.username, &entry.password) {
            return Ok(Credentials::Basic {
                username: username.clone(),
                password: password.clone(),
            });
        }
        let malformed = CredentialsError::Malformed {
            what: ".dockerconfigjson auth",
        };
        let auth = entry.auth.as_deref().ok_or(CredentialsError::Malformed {
            what: ".dockerconfigjson entry (no auth, username/password or registrytoken)",
        })?;
        let decoded = STANDARD
            .decode(auth)
            .map_err(|_| CredentialsError::Malformed {
                what: ".dockerconfigjson auth",
            })?;
        let decoded = String::from_utf8(decoded).map_err(|_| CredentialsError::Malformed {
            what: ".dockerconfigjson auth",
        })?;
        let (username, password) = decoded.split_once(':').ok_or(malformed)?;
        Ok(Credentials::Basic {
            username: username.to_owned(),
            password: password.to_owned(),
        })
    }

    pub(crate) fn to_registry_auth(&self) -> RegistryAuth {
        match self {
            Credentials::Anonymous => RegistryAuth::Anonymous,
            Credentials::Basic { username, password } => {
                RegistryAuth::Basic(username.clone(), password.clone())
            }
            Credentials::Bearer(token) => RegistryAuth::Bearer(token.clone()),
        }
    }
}

/// `https://host:port/v1/` and `host:port` both name `host:port`.
fn registry_host(key: &str) -> &str {
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    key.split('/').next().unwrap_or(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn reads_basic_bearer_and_docker_config() {
        let basic = Credentials::from_secret(&keys(&[("username", "u"), ("password", "p\n")]), "r")
            .unwrap();
        assert_eq!(
            basic,
            Credentials::Basic {
                username: "u".into(),
                password: "p".into()
            }
        );
        let bearer = Credentials::from_secret(&keys(&[("token", "t")]), "r").unwrap();
        assert_eq!(bearer, Credentials::Bearer("t".into()));
        let auth = STANDARD.encode("alice:s3cret");
        let json = format!(
            r#"{{"auths":{{"https://127.0.0.1:5000/v1/":{{"auth":"{auth}"}},"other":{{"registrytoken":"x"}}}}}}"#
        );
        let docker =
            Credentials::from_secret(&keys(&[(".dockerconfigjson", &json)]), "127.0.0.1:5000")
                .unwrap();
        assert_eq!(
            docker,
            Credentials::Basic {
                username: "alice".into(),
                password: "s3cret".into()
            }
        );
        let token =
            Credentials::from_secret(&keys(&[(".dockerconfigjson", &json)]), "other").unwrap();
        assert_eq!(token, Credentials::Bearer("x".into()));
    }

    #[test]
    fn names_what_is_missing_without_leaking_secrets() {
        let none = Credentials::from_secret(&keys(&[("username", "u")]), "r").unwrap_err();
        assert!(matches!(none, CredentialsError::NoKnownKey));
        let json = r#"{"auths":{"elsewhere":{"auth":"eDp5"}}}"#;
        let err = Credentials::from_secret(&keys(&[(".dockerconfigjson", json)]), "r").unwrap_err();
        assert_eq!(
            err.to_string(),
            ".dockerconfigjson has no entry for registry \"r\""
        );
        let debug = format!(
            "{:?}",
            Credentials::Basic {
                username: "u".into(),
                password: "hunter2".into()
            }
        );
        assert!(!debug.contains("hunter2"), "{debug}");
    }
}
