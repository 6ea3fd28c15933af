//! Bootstrap tokens in a workload cluster: Kubernetes' own Secret type
//! `bootstrap.kubernetes.io/token`, kept as `kube-system/bootstrap-token-<id>`. The API
//! server authenticates a joining kubelet with it, the bootstrap signer signs `cluster-info`
//! with it for discovery, and the token cleaner deletes it once its `expiration` passed.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, PostParams};

use crate::error::ClusterCacheError;

/// The namespace the API server reads bootstrap tokens from.
pub const TOKEN_NAMESPACE: &str = "kube-system";
/// The Secret type of a bootstrap token.
pub const TOKEN_SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";

/// A bootstrap token to write into a workload cluster. Its `Debug` hides the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct BootstrapToken {
    /// `[a-z0-9]{6}`, public.
    pub id: String,
    /// `[a-z0-9]{16}`. Secret.
    pub secret: String,
    /// When the cluster stops accepting it, seconds since the Unix epoch; `None`: never.
    pub expires: Option<i64>,
    /// Groups besides `system:bootstrappers` (`auth-extra-groups`).
    pub extra_groups: Vec<String>,
}

impl fmt::Debug for BootstrapToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BootstrapToken")
            .field("id", &self.id)
            .field("secret", &"[redacted]")
            .field("expires", &self.expires)
            .field("extra_groups", &self.extra_groups)
            .finish()
    }
}

/// What the workload cluster holds of the token with one id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenPresence {
    /// No Secret for it: it was never written, or the token cleaner or someone deleted it.
    Missing,
    /// Its Secret, with the expiry it says (`None`: it never expires).
    Present { expires: Option<i64> },
}

/// The name of the Secret of token `id`.
pub fn token_secret_name(id: &str) -> String {
    format!("bootstrap-token-{id}")
}

/// The Secret that makes the workload cluster accept `token` for discovery (signing) and
/// TLS bootstrap (authentication), as `kubeadm token create` writes it.
pub fn token_secret(token: &BootstrapToken) -> Secret {
    let mut data = BTreeMap::from([
        ("token-id".to_owned(), token.id.clone()),
        ("token-secret".to_owned(), token.secret.clone()),
        (
            "usage-bootstrap-authentication".to_owned(),
            "true".to_owned(),
        ),
        ("usage-bootstrap-signing".to_owned(), "true".to_owned()),
        (
            "description".to_owned(),
            "Issued by capw for machines joining the cluster.".to_owned(),
        ),
    ]);
    if let Some(expires) = token.expires.and_then(rfc3339) {
        data.insert("expiration".to_owned(), expires);
    }
    if !token.extra_groups.is_empty() {
        data.insert("auth-extra-groups".to_owned(), token.extra_groups.join(","));
    }
    Secret {
        metadata: ObjectMeta {
            name: Some(token_secret_name(&token.id)),
            namespace: Some(TOKEN_NAMESPACE.to_owned()),
            ..ObjectMeta::default()
        },
        type_: Some(TOKEN_SECRET_TYPE.to_owned()),
        string_data: Some(data),
        ..Secret::default()
    }
}

/// `seconds` since the epoch as RFC 3339 in UTC, the form `expiration` takes.
fn rfc3339(seconds: i64) -> Option<String> {
    let at = k8s_openapi::jiff::Timestamp::from_second(seconds).ok()?;
    Some(at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
}

/// What `secret` says of its token: present, with the expiry its `expiration` gives. A
/// Secret of another type, or whose expiration does not parse, counts as missing: the API
/// server would not accept the token either.
pub fn presence(secret: Option<&Secret>) -> TokenPresence {
    let Some(secret) = secret else {
        return TokenPresence::Missing;
    };
    if secret.type_.as_deref() != Some(TOKEN_SECRET_TYPE) {
        return TokenPresence::Missing;
    }
    let expiration = secret
        .data
        .as_ref()
        .and_then(|d| d.get("expiration"))
        .map(|b| String::from_utf8_lossy(&b.0).into_owned());
    match expiration {
        None => TokenPresence::Present { expires: None },
        Some(text) => match text.parse::<k8s_openapi::jiff::Timestamp>() {
            Ok(at) => TokenPresence::Present {
                expires: Some(at.as_second()),
            },
            Err(_) => TokenPresence::Missing,
        },
    }
}

/// Reads token `id`'s Secret within `timeout`.
pub(crate) async fn read(
    client: &kube::Client,
    id: &str,
    timeout: Duration,
) -> Result<TokenPresence, ClusterCacheError> {
    let api = Api::<Secret>::namespaced(client.clone(), TOKEN_NAMESPACE);
    let name = token_secret_name(id);
    match tokio::time::timeout(timeout, api.get_opt(&name)).await {
        Err(_) => Err(ClusterCacheError::Timeout {
            what: format!("reading Secret {TOKEN_NAMESPACE}/{name}"),
            after: timeout,
        }),
        Ok(Err(source)) => Err(ClusterCacheError::Token {
            id: id.to_owned(),
            source,
        }),
        Ok(Ok(secret)) => Ok(presence(secret.as_ref())),
    }
}

/// Writes `token`'s Secret within `timeout`; one already there with its id is left as it is
/// (ids are random: it is this token, written by a pass that was cut short).
pub(crate) async fn write(
    client: &kube::Client,
    token: &BootstrapToken,
    timeout: Duration,
) -> Result<(), ClusterCacheError> {
    let api = Api::<Secret>::namespaced(client.clone(), TOKEN_NAMESPACE);
    let created = tokio::time::timeout(
        timeout,
        api.create(&PostParams::default(), &token_secret(token)),
    )
    .await;
    match created {
        Err(_) => Err(ClusterCacheError::Timeout {
            what: format!(
                "writing Secret {TOKEN_NAMESPACE}/{}",
                token_secret_name(&token.id)
            ),
            after: timeout,
        }),
        Ok(Ok(_)) => Ok(()),
        Ok(Err(kube::Error::Api(status))) if status.code == 409 => Ok(()),
        Ok(Err(source)) => Err(ClusterCacheError::Token {
            id: token.id.clone(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    fn token() -> BootstrapToken {
        BootstrapToken {
            id: "abcdef".into(),
            secret: "0123456789abcdef".into(),
            expires: Some(1_796_300_000),
            extra_groups: vec!["system:bootstrappers:kubeadm:default-node-token".into()],
        }
    }

    /// The Secret as the API server stores it: `stringData` turned into `data`.
    fn stored(secret: Secret) -> Secret {
        Secret {
            data: secret.string_data.map(|d| {
                d.into_iter()
                    .map(|(k, v)| (k, ByteString(v.into_bytes())))
                    .collect()
            }),
            string_data: None,
            ..secret
        }
    }

    #[test]
    fn the_secret_has_kubernetes_bootstrap_token_form() {
        let s = token_secret(&token());
        assert_eq!(s.metadata.name.as_deref(), Some("bootstrap-token-abcdef"));
        assert_eq!(s.metadata.namespace.as_deref(), Some("kube-system"));
        assert_eq!(s.type_.as_deref(), Some("bootstrap.kubernetes.io/token"));
        let data = s.string_data.clone().unwrap_or_default();
        assert_eq!(data["token-id"], "abcdef");
        assert_eq!(data["token-secret"], "0123456789abcdef");
        assert_eq!(data["usage-bootstrap-authentication"], "true");
        assert_eq!(data["usage-bootstrap-signing"], "true");
        assert_eq!(
            data["auth-extra-groups"],
            "system:bootstrappers:kubeadm:default-node-token"
        );
        assert_eq!(data["expiration"], "2026-12-03T12:13:20Z");
        // Read back, it is present with the expiry it was written with.
        assert_eq!(
            presence(Some(&stored(s))),
            TokenPresence::Present {
                expires: Some(1_796_300_000)
            }
        );
    }

    #[test]
    fn a_token_without_expiry_never_expires_and_a_garbled_one_is_missing() {
        let forever = token_secret(&BootstrapToken {
            expires: None,
            ..token()
        });
        assert!(
            !forever
                .string_data
                .clone()
                .unwrap_or_default()
                .contains_key("expiration")
        );
        assert_eq!(
            presence(Some(&stored(forever))),
            TokenPresence::Present { expires: None }
        );
        let mut garbled = stored(token_secret(&token()));
        if let Some(d) = garbled.data.as_mut() {
            d.insert("expiration".into(), ByteString(b"tomorrow".to_vec()));
        }
        assert_eq!(presence(Some(&garbled)), TokenPresence::Missing);
        let mut opaque = stored(token_secret(&token()));
        opaque.type_ = Some("Opaque".into());
        assert_eq!(presence(Some(&opaque)), TokenPresence::Missing);
        assert_eq!(presence(None), TokenPresence::Missing);
    }

    #[test]
    fn debug_hides_the_secret() {
        let shown = format!("{:?}", token());
        assert!(shown.contains("abcdef"), "{shown}");
        assert!(!shown.contains("0123456789abcdef"), "{shown}");
    }
}
