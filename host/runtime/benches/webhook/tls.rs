//! A self-signed certificate for 127.0.0.1, made at start, and the rustls configs of both
//! ends: the server presents it, the client trusts it alone.

use std::sync::Arc;

use anyhow::Context as _;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ClientConfig, RootCertStore, ServerConfig};

/// The host name the certificate is for, and the one the client connects to.
pub const HOST: &str = "127.0.0.1";

pub struct SelfSigned {
    pub server: Arc<ServerConfig>,
    pub client: ClientConfig,
}

/// A fresh ECDSA P-256 key and certificate for [`HOST`]; rustls with ring on both ends, as in
/// `capw` (TLS 1.3 is what they agree on).
pub fn self_signed() -> anyhow::Result<SelfSigned> {
    let certified =
        rcgen::generate_simple_self_signed(vec![HOST.to_owned()]).context("certificate")?;
    let cert = certified.cert.der().clone();
    let key = PrivateKeyDer::from(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .context("server config")?;
    let mut roots = RootCertStore::empty();
    roots.add(cert).context("trust the certificate")?;
    let client = ClientConfig::builder_with_provider(provider as Arc<CryptoProvider>)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(SelfSigned {
        server: Arc::new(server),
        client,
    })
}
