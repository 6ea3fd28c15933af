//! The service's credentials as the contract's `control-plane-access`.

use capw_sdk::control_plane::ControlPlaneAccess;
use capw_sdk::types::{Endpoint, JoinToken};

use crate::api::ManagedControlPlaneCredentials;

/// The item name the join token goes under, as kubeadm-bootstrap names its own.
pub const JOIN_TOKEN_ITEM: &str = "bootstrap-token";

/// The service handed out a token that is not `<id>.<secret>`. Never quotes the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the service's join token is not of the form <id>.<secret>")]
pub struct BadJoinToken;

/// `credentials` as the host takes them: the endpoint, the CA, the admin kubeconfig and the
/// join token split into its public id and its secret.
///
/// # Errors
///
/// [`BadJoinToken`] when the token has no `.` or an empty part.
pub fn access(
    credentials: ManagedControlPlaneCredentials,
) -> Result<ControlPlaneAccess, BadJoinToken> {
    let (id, secret) = credentials
        .join_token
        .split_once('.')
        .filter(|(id, secret)| !id.is_empty() && !secret.is_empty())
        .ok_or(BadJoinToken)?;
    let join_token = JoinToken {
        item: JOIN_TOKEN_ITEM.to_owned(),
        id: id.to_owned(),
        secret: secret.to_owned(),
        ttl_seconds: credentials.join_token_ttl_seconds,
        extra_groups: credentials.join_token_groups,
    };
    Ok(ControlPlaneAccess {
        endpoint: Endpoint {
            host: credentials.endpoint.host,
            port: credentials.endpoint.port,
        },
        ca_certificate: credentials.ca_certificate,
        admin_kubeconfig: credentials.admin_kubeconfig,
        join_token: Some(join_token),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api;

    fn credentials(token: &str) -> ManagedControlPlaneCredentials {
        ManagedControlPlaneCredentials {
            endpoint: api::Endpoint {
                host: "mcp-1.sim".into(),
                port: 443,
            },
            ca_certificate: "-----BEGIN CERTIFICATE-----\n...".into(),
            admin_kubeconfig: "apiVersion: v1\nkind: Config\n".into(),
            join_token: token.into(),
            join_token_ttl_seconds: 3600,
            join_token_issued_at: 1,
            join_token_groups: vec!["system:bootstrappers:simcloud".into()],
        }
    }

    #[test]
    fn the_token_is_split_into_id_and_secret() {
        let a = match access(credentials("abcdef.0123456789abcdef")) {
            Ok(a) => a,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(
            a.endpoint,
            Endpoint {
                host: "mcp-1.sim".into(),
                port: 443
            }
        );
        assert!(a.ca_certificate.starts_with("-----BEGIN CERTIFICATE-----"));
        let Some(token) = a.join_token else {
            panic!("no token");
        };
        assert_eq!(token.item, "bootstrap-token");
        assert_eq!(
            (token.id.as_str(), token.secret.as_str()),
            ("abcdef", "0123456789abcdef")
        );
        assert_eq!(token.ttl_seconds, 3600);
        assert_eq!(token.extra_groups, ["system:bootstrappers:simcloud"]);
    }

    #[test]
    fn a_token_without_its_two_parts_is_refused_without_quoting_it() {
        for bad in ["abcdef0123456789abcdef", ".secret", "abcdef."] {
            let e = access(credentials(bad)).err();
            assert_eq!(e, Some(BadJoinToken));
            assert!(!BadJoinToken.to_string().contains(bad));
        }
    }
}
