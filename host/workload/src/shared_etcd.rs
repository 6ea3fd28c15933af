//! An etcd shared by several hosted control planes, as Kamaji shares one: each cluster keeps
//! its keys under a prefix of its own and reaches them as an etcd user of its own whose role
//! reads and writes that prefix alone, so that one cluster's credentials cannot read
//! another's keys.
//!
//! The host administers the datastore through etcd's JSON gateway as a user with the root
//! role, by password: the gateway does not take a client certificate's common name as the user
//! (and refuses a certificate that has one while auth is on), so the host's own TLS client
//! certificate has an empty subject. The API servers reach etcd over gRPC, where the common
//! name of the certificate the host mints for them is their user.
//!
//! Neither the datastore's CA key nor its password ever appears in an error or a log line.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::etcd::{EtcdError, client_certificate, client_tls, gateway_call};

/// What a cluster's API servers need to use their part of a shared datastore. The key is
/// secret: `Debug` leaves it out.
#[derive(Clone, PartialEq, Eq)]
pub struct DatastoreAccess {
    /// The datastore's client URLs, comma-separated (`--etcd-servers`).
    pub endpoints: String,
    /// The cluster's key prefix (`--etcd-prefix`).
    pub prefix: String,
    /// The datastore's CA certificate (PEM).
    pub ca_certificate: String,
    /// The cluster user's client certificate (PEM); its common name is the user.
    pub client_certificate: String,
    /// Its key (PEM). Secret.
    pub client_key: String,
}

impl std::fmt::Debug for DatastoreAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatastoreAccess")
            .field("endpoints", &self.endpoints)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// The etcd user of the cluster `name` in `namespace`: `capw:<namespace>:<name>` (a colon is
/// in neither, so no two clusters share a user).
pub fn datastore_user(namespace: &str, name: &str) -> String {
    format!("capw:{namespace}:{name}")
}

/// The key prefix of the cluster `name` in `namespace`: `/capw/<namespace>/<name>` (its keys
/// are under `/capw/<namespace>/<name>/`, a slash being in neither).
pub fn datastore_prefix(namespace: &str, name: &str) -> String {
    format!("/capw/{namespace}/{name}")
}

/// An administrator's access to a shared etcd.
pub struct SharedEtcd {
    endpoints: Vec<(String, u16)>,
    endpoint_urls: String,
    ca_pem: String,
    ca_key_pem: String,
    username: String,
    password: String,
    tls: Arc<rustls::ClientConfig>,
    timeout: Duration,
}

impl std::fmt::Debug for SharedEtcd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedEtcd")
            .field("endpoints", &self.endpoint_urls)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// `https://host:port` (or `host:port`, or `host`: port 2379) as host and port.
fn parse_endpoint(url: &str) -> Option<(String, u16)> {
    let rest = url.trim().split_once("://").map_or(url.trim(), |(_, r)| r);
    let authority = rest.split('/').next()?;
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6.split_once(']')?;
            (host, after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        },
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => 2379,
    };
    (!host.is_empty()).then(|| (host.to_owned(), port))
}

#[derive(Deserialize)]
struct Authenticated {
    token: String,
}

/// An administrator's session: the endpoint that authenticated it and its token.
struct Session<'a> {
    endpoint: &'a (String, u16),
    token: String,
}

impl SharedEtcd {
    /// The datastore at `endpoints` (comma-separated client URLs), trusting the CA `ca_pem`
    /// whose key `ca_key_pem` (PKCS#8) the host signs client certificates with, administered
    /// as `username` (a user with the root role) with `password`; each call bounded by
    /// `timeout`.
    ///
    /// # Errors
    ///
    /// [`EtcdError::Ca`] when the CA does not sign, [`EtcdError::Call`] when an endpoint is
    /// not a URL; neither quotes the key or the password.
    pub fn new(
        endpoints: &str,
        ca_pem: &str,
        ca_key_pem: &str,
        username: &str,
        password: &str,
        timeout: Duration,
    ) -> Result<Self, EtcdError> {
        let urls: Vec<&str> = (endpoints.split(',').map(str::trim))
            .filter(|e| !e.is_empty())
            .collect();
        let parsed = (urls.iter())
            .map(|e| {
                parse_endpoint(e).ok_or_else(|| EtcdError::Call {
                    endpoint: (*e).to_owned(),
                    message: "not a client URL (https://host:port)".into(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if parsed.is_empty() {
            return Err(EtcdError::Call {
                endpoint: String::new(),
                message: "no endpoints".into(),
            });
        }
        let admin = client_certificate(ca_pem, ca_key_pem, None, time::Duration::hours(1))?;
        Ok(Self {
            endpoint_urls: urls.join(","),
            endpoints: parsed,
            ca_pem: ca_pem.to_owned(),
            ca_key_pem: ca_key_pem.to_owned(),
            username: username.to_owned(),
            password: password.to_owned(),
            tls: client_tls(ca_pem, &admin)?,
            timeout,
        })
    }

    /// A session on the first endpoint that authenticates the administrator: the endpoint
    /// and the token.
    async fn session(&self) -> Result<Session<'_>, EtcdError> {
        let mut failures = Vec::new();
        for endpoint in &self.endpoints {
            let answer = gateway_call::<Authenticated>(
                &self.tls,
                &endpoint.0,
                endpoint.1,
                "/v3/auth/authenticate",
                json!({"name": self.username, "password": self.password}),
                None,
                self.timeout,
            )
            .await;
            match answer {
                Ok(a) => {
                    return Ok(Session {
                        endpoint,
                        token: a.token,
                    });
                }
                Err(e) => failures.push(e.to_string()),
            }
        }
        Err(EtcdError::Call {
            endpoint: self.endpoint_urls.clone(),
            message: format!(
                "authenticating as {}: {}",
                self.username,
                failures.join("; ")
            ),
        })
    }

    /// One call in `session`; an error whose message holds `tolerate` (what is already so)
    /// is no error.
    async fn call(
        &self,
        session: &Session<'_>,
        path: &str,
        body: Value,
        tolerate: Option<&str>,
    ) -> Result<(), EtcdError> {
        let (host, port) = session.endpoint;
        let answer = gateway_call::<Value>(
            &self.tls,
            host,
            *port,
            path,
            body,
            Some(&session.token),
            self.timeout,
        )
        .await;
        match answer {
            Err(EtcdError::Call { message, .. })
                if tolerate.is_some_and(|t| message.contains(t)) =>
            {
                Ok(())
            }
            other => other.map(drop),
        }
    }

    /// Gives `user` a role of the same name that reads and writes the keys under
    /// `prefix` + `/` and nothing else (made when missing, granted again when present), and
    /// mints its client certificate, valid for `validity`: what its API servers need. Admitting
    /// a user again mints a new certificate and keeps what etcd holds.
    ///
    /// # Errors
    ///
    /// [`EtcdError::Call`] naming the endpoint and etcd's message.
    pub async fn admit(
        &self,
        user: &str,
        prefix: &str,
        validity: std::time::Duration,
    ) -> Result<DatastoreAccess, EtcdError> {
        let session = self.session().await?;
        let (key, range_end) = key_range(prefix);
        self.call(
            &session,
            "/v3/auth/user/add",
            json!({"name": user, "options": {"no_password": true}}),
            Some("already exists"),
        )
        .await?;
        self.call(
            &session,
            "/v3/auth/role/add",
            json!({"name": user}),
            Some("already exists"),
        )
        .await?;
        self.call(
            &session,
            "/v3/auth/role/grant",
            json!({"name": user, "perm": {"permType": "READWRITE", "key": key, "range_end": range_end}}),
            None,
        )
        .await?;
        self.call(
            &session,
            "/v3/auth/user/grant",
            json!({"user": user, "role": user}),
            None,
        )
        .await?;
        let client = client_certificate(
            &self.ca_pem,
            &self.ca_key_pem,
            Some(user),
            time::Duration::try_from(validity).unwrap_or(time::Duration::MAX),
        )?;
        Ok(DatastoreAccess {
            endpoints: self.endpoint_urls.clone(),
            prefix: prefix.to_owned(),
            ca_certificate: self.ca_pem.clone(),
            client_certificate: client.cert_pem,
            client_key: client.key_pem,
        })
    }

    /// Deletes `user` and its role, then every key under `prefix` + `/`: the user goes first,
    /// so that an API server still running with its certificate cannot write the prefix again
    /// once it is emptied (etcd checks the user of every request). What is already gone is not
    /// an error.
    ///
    /// # Errors
    ///
    /// [`EtcdError::Call`] naming the endpoint and etcd's message.
    pub async fn remove(&self, user: &str, prefix: &str) -> Result<(), EtcdError> {
        let session = self.session().await?;
        let (key, range_end) = key_range(prefix);
        self.call(
            &session,
            "/v3/auth/user/delete",
            json!({"name": user}),
            Some("not found"),
        )
        .await?;
        self.call(
            &session,
            "/v3/auth/role/delete",
            json!({"role": user}),
            Some("not found"),
        )
        .await?;
        self.call(
            &session,
            "/v3/kv/deleterange",
            json!({"key": key, "range_end": range_end}),
            None,
        )
        .await
    }
}

/// The key range of everything under `prefix` + `/`, base64 as the gateway takes bytes: from
/// `<prefix>/` up to `<prefix>0` (`0` follows `/`).
fn key_range(prefix: &str) -> (String, String) {
    let prefix = prefix.trim_end_matches('/');
    (
        STANDARD.encode(format!("{prefix}/")),
        STANDARD.encode(format!("{prefix}0")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cluster_has_its_own_user_and_a_prefix_no_other_cluster_extends() {
        assert_eq!(datastore_user("team-a", "alpha"), "capw:team-a:alpha");
        assert_ne!(
            datastore_user("a-b", "c"),
            datastore_user("a", "b-c"),
            "namespace and name run together"
        );
        let (key, end) = key_range(&datastore_prefix("default", "alpha"));
        let decode = |s: &str| String::from_utf8(STANDARD.decode(s).unwrap()).unwrap();
        assert_eq!(decode(&key), "/capw/default/alpha/");
        assert_eq!(decode(&end), "/capw/default/alpha0");
        // alpha2's keys sort after alpha's range: the range is alpha's alone.
        let other = "/capw/default/alpha2/registry/pods";
        assert!(!(decode(&key).as_str() <= other && other < decode(&end).as_str()));
        let own = "/capw/default/alpha/registry/pods";
        assert!(decode(&key).as_str() <= own && own < decode(&end).as_str());
    }

    #[test]
    fn endpoints_parse_with_or_without_scheme_and_port() {
        assert_eq!(
            parse_endpoint("https://10.0.0.1:2379"),
            Some(("10.0.0.1".into(), 2379))
        );
        assert_eq!(
            parse_endpoint(" etcd.example:12379 "),
            Some(("etcd.example".into(), 12379))
        );
        assert_eq!(parse_endpoint("https://[::1]"), Some(("::1".into(), 2379)));
        assert_eq!(parse_endpoint("https://host:port"), None);
    }
}
