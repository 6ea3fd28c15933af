//! The control plane's etcd, as the host keeps its membership: list the members and the
//! leader, move leadership off a member, remove a member.
//!
//! The calls go to etcd's JSON gateway (`/v3/...`, served on the client port beside gRPC)
//! over HTTP/1.1 and TLS, with a client certificate the host mints for each [`EtcdAccess`]
//! from the cluster's etcd CA: nothing of a machine's own files is used, and the certificate
//! lives in memory only, valid for an hour. The gateway and not an etcd client crate: the
//! four calls are plain JSON, and a gRPC client would add protobuf compilation (a
//! `protoc`, tonic and prost) to every build of the host for them.
//!
//! Every call has a deadline; the CA key and the client key never appear in an error, only
//! the endpoint and etcd's own message.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use serde::Deserialize;
use serde_json::{Value, json};

/// A failed etcd call or an access that cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    /// The CA items do not make a certificate authority (the message says which and why,
    /// never their content).
    #[error("the etcd CA {0}")]
    Ca(String),
    /// No endpoint answered, or the one asked refused; names the endpoint and etcd's message.
    #[error("{endpoint}: {message}")]
    Call { endpoint: String, message: String },
}

/// A client identity for one cluster's etcd: the CA to trust and a client certificate
/// signed by it.
#[derive(Clone)]
pub struct EtcdAccess {
    tls: Arc<rustls::ClientConfig>,
    port: u16,
    timeout: Duration,
}

impl std::fmt::Debug for EtcdAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdAccess")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// One member as etcd lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdMember {
    /// etcd's member id.
    pub id: u64,
    /// The member's name; empty for a member added but never started.
    pub name: String,
    pub peer_urls: Vec<String>,
    pub client_urls: Vec<String>,
}

impl EtcdMember {
    /// The hosts of its peer URLs (`https://10.0.0.7:2380` gives `10.0.0.7`).
    pub fn peer_hosts(&self) -> impl Iterator<Item = &str> {
        self.peer_urls.iter().filter_map(|u| url_host(u))
    }
}

/// The membership as one member answered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdMembership {
    pub members: Vec<EtcdMember>,
    /// The leader's id, as the answering member knows it (`None` with no leader).
    pub leader: Option<u64>,
}

fn url_host(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split('/').next()?;
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    (!host.is_empty()).then_some(host)
}

impl EtcdAccess {
    /// An access to the etcd on `port` of each control-plane machine, trusting the CA
    /// certificate `ca_pem` and with a client certificate signed by `ca_key_pem` (PKCS#8),
    /// each call bounded by `timeout`.
    ///
    /// # Errors
    ///
    /// [`EtcdError::Ca`] when the certificate or key does not parse or do not sign.
    pub fn new(
        ca_pem: &str,
        ca_key_pem: &str,
        port: u16,
        timeout: Duration,
    ) -> Result<Self, EtcdError> {
        let client = client_certificate(
            ca_pem,
            ca_key_pem,
            Some("capw-etcd-client"),
            time::Duration::hours(1),
        )?;
        Ok(Self {
            tls: client_tls(ca_pem, &client)?,
            port,
            timeout,
        })
    }

    /// The members and the leader, asked of each host of `hosts` in turn until one
    /// answers.
    ///
    /// # Errors
    ///
    /// [`EtcdError::Call`] naming every host tried when none answered.
    pub async fn membership(&self, hosts: &[String]) -> Result<EtcdMembership, EtcdError> {
        let mut failures = Vec::new();
        for host in hosts {
            match self.membership_from(host).await {
                Ok(m) => return Ok(m),
                Err(e) => failures.push(e.to_string()),
            }
        }
        Err(EtcdError::Call {
            endpoint: if hosts.is_empty() {
                "no control-plane machine has an address".into()
            } else {
                hosts.join(", ")
            },
            message: failures.join("; "),
        })
    }

    async fn membership_from(&self, host: &str) -> Result<EtcdMembership, EtcdError> {
        #[derive(Deserialize)]
        struct Member {
            #[serde(rename = "ID", default)]
            id: Option<String>,
            #[serde(default)]
            name: String,
            #[serde(rename = "peerURLs", default)]
            peer_urls: Vec<String>,
            #[serde(rename = "clientURLs", default)]
            client_urls: Vec<String>,
        }
        #[derive(Deserialize)]
        struct List {
            #[serde(default)]
            members: Vec<Member>,
        }
        #[derive(Deserialize)]
        struct Status {
            #[serde(default)]
            leader: Option<String>,
        }
        let list: List = self
            .call(host, "/v3/cluster/member/list", json!({}))
            .await?;
        let status: Status = self.call(host, "/v3/maintenance/status", json!({})).await?;
        let members = list
            .members
            .into_iter()
            .map(|m| {
                Ok(EtcdMember {
                    id: parse_id(m.id.as_deref(), host)?,
                    name: m.name,
                    peer_urls: m.peer_urls,
                    client_urls: m.client_urls,
                })
            })
            .collect::<Result<Vec<_>, EtcdError>>()?;
        Ok(EtcdMembership {
            members,
            leader: status
                .leader
                .as_deref()
                .and_then(|l| l.parse().ok())
                .filter(|l| *l != 0),
        })
    }

    /// Asks the leader at `leader_host` to hand leadership to member `to`.
    ///
    /// # Errors
    ///
    /// [`EtcdError::Call`] when it refuses or does not answer.
    pub async fn move_leader(&self, leader_host: &str, to: u64) -> Result<(), EtcdError> {
        let _: Value = self
            .call(
                leader_host,
                "/v3/maintenance/transfer-leadership",
                json!({"targetID": to.to_string()}),
            )
            .await?;
        Ok(())
    }

    /// Removes member `id` through `host` (another member). A member already gone is not an
    /// error: the call is safe to repeat.
    ///
    /// # Errors
    ///
    /// [`EtcdError::Call`] when it refuses (say, no quorum) or does not answer.
    pub async fn remove_member(&self, host: &str, id: u64) -> Result<(), EtcdError> {
        match self
            .call::<Value>(
                host,
                "/v3/cluster/member/remove",
                json!({"ID": id.to_string()}),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(EtcdError::Call { message, .. }) if message.contains("member not found") => Ok(()),
            Err(e) => Err(e),
        }
    }

    async fn call<T: serde::de::DeserializeOwned>(
        &self,
        host: &str,
        path: &str,
        body: Value,
    ) -> Result<T, EtcdError> {
        gateway_call(&self.tls, host, self.port, path, body, None, self.timeout).await
    }
}

/// A client certificate and its key (PEM), for a TLS client ([`client_tls`]) or for a
/// component to present.
pub(crate) struct ClientCertificate {
    pub(crate) cert_pem: String,
    pub(crate) key_pem: String,
    der: Vec<u8>,
    key_der: Vec<u8>,
}

/// A client certificate signed by the CA `ca_pem` with `ca_key_pem` (PKCS#8), for
/// `common_name` (none: an empty subject, as etcd's gateway wants from a client that
/// authenticates by password), valid from five minutes ago for `valid`.
pub(crate) fn client_certificate(
    ca_pem: &str,
    ca_key_pem: &str,
    common_name: Option<&str>,
    valid: time::Duration,
) -> Result<ClientCertificate, EtcdError> {
    let ca_key = rcgen::KeyPair::from_pem(ca_key_pem)
        .map_err(|_| EtcdError::Ca("key is not a PKCS#8 PEM private key".into()))?;
    let issuer = rcgen::Issuer::from_ca_cert_pem(ca_pem, ca_key)
        .map_err(|_| EtcdError::Ca("certificate is not a PEM X.509 certificate".into()))?;
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
        .map_err(|e| EtcdError::Ca(format!("client key: {e}")))?;
    let mut params = rcgen::CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    if let Some(cn) = common_name {
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
    }
    params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::minutes(5);
    params.not_after = now + valid;
    let cert = params
        .signed_by(&key, &issuer)
        .map_err(|_| EtcdError::Ca("key does not sign a client certificate".into()))?;
    Ok(ClientCertificate {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
        der: cert.der().to_vec(),
        key_der: key.serialize_der(),
    })
}

/// A TLS client trusting `ca_pem` alone and presenting `client`.
pub(crate) fn client_tls(
    ca_pem: &str,
    client: &ClientCertificate,
) -> Result<Arc<rustls::ClientConfig>, EtcdError> {
    let mut roots = rustls::RootCertStore::empty();
    let ca_der = rustls::pki_types::pem::PemObject::from_pem_slice(ca_pem.as_bytes())
        .map_err(|_| EtcdError::Ca("certificate is not PEM".into()))?;
    roots
        .add(ca_der)
        .map_err(|e| EtcdError::Ca(format!("certificate is not a trust anchor: {e}")))?;
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| EtcdError::Ca(format!("TLS: {e}")))?
    .with_root_certificates(roots)
    .with_client_auth_cert(
        vec![CertificateDer::from(client.der.clone())],
        PrivateKeyDer::try_from(client.key_der.clone())
            .map_err(|e| EtcdError::Ca(format!("client key: {e}")))?,
    )
    .map_err(|e| EtcdError::Ca(format!("client certificate: {e}")))?;
    Ok(Arc::new(tls))
}

/// One call to the JSON gateway of the etcd at `host:port`, with the auth `token` when given:
/// its answer, or etcd's message naming the endpoint. Bounded by `timeout`.
pub(crate) async fn gateway_call<T: serde::de::DeserializeOwned>(
    tls: &Arc<rustls::ClientConfig>,
    host: &str,
    port: u16,
    path: &str,
    body: Value,
    token: Option<&str>,
    timeout: Duration,
) -> Result<T, EtcdError> {
    let endpoint = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let fail = |message: String| EtcdError::Call {
        endpoint: endpoint.clone(),
        message,
    };
    let exchange = async {
        let tcp = tokio::net::TcpStream::connect(&endpoint)
            .await
            .map_err(|e| fail(format!("connect: {e}")))?;
        let name =
            ServerName::try_from(host.to_owned()).map_err(|e| fail(format!("server name: {e}")))?;
        let tls = tokio_rustls::TlsConnector::from(tls.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| fail(format!("TLS: {e}")))?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| fail(format!("HTTP: {e}")))?;
        let driver = tokio::spawn(conn);
        let mut request = http::Request::post(path)
            .header(http::header::HOST, &endpoint)
            .header(http::header::CONTENT_TYPE, "application/json");
        if let Some(token) = token {
            request = request.header(http::header::AUTHORIZATION, token);
        }
        let request = request
            .body(Full::new(Bytes::from(body.to_string())))
            .map_err(|e| fail(format!("request: {e}")))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| fail(format!("{path}: {e}")))?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| fail(format!("{path}: reading the answer: {e}")))?
            .to_bytes();
        driver.abort();
        if !status.is_success() {
            // The gateway answers a gRPC error as {"error": ..., "message": ..., "code": ...}.
            let message = serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|v| {
                    v.get("message")
                        .or_else(|| v.get("error"))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .unwrap_or_else(|| format!("HTTP {status}"));
            return Err(fail(format!("{path}: {message}")));
        }
        serde_json::from_slice(&bytes).map_err(|e| fail(format!("{path}: answer: {e}")))
    };
    tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| fail(format!("{path}: no answer within {timeout:?}")))?
}

fn parse_id(id: Option<&str>, host: &str) -> Result<u64, EtcdError> {
    id.and_then(|i| i.parse().ok())
        .ok_or_else(|| EtcdError::Call {
            endpoint: host.to_owned(),
            message: format!("a member without a valid ID ({id:?})"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_peer_urls() {
        assert_eq!(url_host("https://10.0.0.7:2380"), Some("10.0.0.7"));
        assert_eq!(url_host("https://[fd00::7]:2380"), Some("fd00::7"));
        assert_eq!(url_host("http://node-a/"), Some("node-a"));
        assert_eq!(url_host("https://:2380"), None);
    }

    #[test]
    fn a_bad_ca_is_named_and_not_shown() {
        let secret = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n";
        let e = EtcdAccess::new("not a certificate", secret, 2379, Duration::from_secs(1))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("the etcd CA key"), "{e}");
        assert!(!e.contains("c2VjcmV0"), "{e}");
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let e = EtcdAccess::new(
            "not a certificate",
            &key.serialize_pem(),
            2379,
            Duration::from_secs(1),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("the etcd CA certificate"), "{e}");
    }
}
