//! The validating admission webhook: `POST /validate` over HTTPS, for Clusters,
//! ClusterClasses and WasmProviders, running [`Executor::admit`] (the checks of a reconcile
//! pass) before the API server stores anything.
//!
//! The serving certificate comes from a `kubernetes.io/tls` Secret (`tls.crt`, `tls.key`),
//! watched: a rotated certificate is served from the next handshake on, without a restart. A
//! Secret that is missing or does not hold a usable key pair keeps the last good certificate
//! (none at first: handshakes fail until one comes) and is logged without its content.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwapOption;
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::routing::post;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::Client;
use kube::api::Api;
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::runtime::watcher;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use capw_engine::Executor;

use crate::controller::ExecutorSlot;
use crate::error::chain;

/// The path the API server posts AdmissionReviews to.
pub const VALIDATE_PATH: &str = "/validate";

/// Longest a review may take: the API server's default webhook timeout is 10 s, and an answer
/// after it is lost. The checks call providers, each bounded by its own deadline.
const REVIEW_TIMEOUT: Duration = Duration::from_secs(8);

/// Longest a client may take over its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest AdmissionReview read: an object of the API server's largest (3 MiB request) twice,
/// old and new.
const MAX_REVIEW_BYTES: usize = 8 << 20;

/// Where the webhook listens and where its certificate is.
#[derive(Clone, Debug)]
pub struct WebhookConfig {
    /// Address of the HTTPS endpoint.
    pub address: SocketAddr,
    /// Namespace of the certificate's Secret.
    pub cert_secret_namespace: String,
    /// Name of the certificate's Secret (`tls.crt`, `tls.key`).
    pub cert_secret_name: String,
}

/// The certificate served now.
#[derive(Debug, Default)]
struct Certificate(ArcSwapOption<CertifiedKey>);

impl ResolvesServerCert for Certificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.0.load_full()
    }
}

/// The key pair of a TLS Secret, or what is wrong with it (never its content).
fn key_pair(secret: &Secret) -> Result<CertifiedKey, String> {
    let item = |key: &str| {
        secret
            .data
            .as_ref()
            .and_then(|d| d.get(key))
            .map(|b| b.0.as_slice())
            .ok_or_else(|| format!("no {key}"))
    };
    let certs = CertificateDer::pem_slice_iter(item("tls.crt")?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("tls.crt is not PEM certificates: {e}"))?;
    if certs.is_empty() {
        return Err("tls.crt holds no certificate".into());
    }
    let key = PrivateKeyDer::from_pem_slice(item("tls.key")?)
        .map_err(|e| format!("tls.key is not a PEM private key: {e}"))?;
    let signer = rustls::crypto::ring::sign::any_supported_type(&key)
        .map_err(|e| format!("tls.key: {e}"))?;
    let pair = CertifiedKey::new(certs, signer);
    pair.keys_match()
        .map_err(|e| format!("tls.key does not match tls.crt: {e}"))?;
    Ok(pair)
}

/// Keeps `certificate` to the Secret's until the task is dropped.
async fn watch_certificate(client: Client, config: WebhookConfig, certificate: Arc<Certificate>) {
    let api: Api<Secret> = Api::namespaced(client, &config.cert_secret_namespace);
    let selector = format!("metadata.name={}", config.cert_secret_name);
    let secret = format!(
        "{}/{}",
        config.cert_secret_namespace, config.cert_secret_name
    );
    let mut events = watcher(api, watcher::Config::default().fields(&selector)).boxed();
    while let Some(event) = events.next().await {
        match event {
            Ok(watcher::Event::Apply(s) | watcher::Event::InitApply(s)) => match key_pair(&s) {
                Ok(pair) => {
                    certificate.0.store(Some(Arc::new(pair)));
                    tracing::info!(%secret, "webhook certificate loaded");
                }
                Err(why) => {
                    tracing::warn!(%secret, "webhook certificate not usable, keeping the last one: {why}");
                }
            },
            Ok(watcher::Event::Delete(_)) => {
                tracing::warn!(%secret, "webhook certificate Secret deleted; serving the last one");
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(%secret, error = %chain(&e), "watching the webhook certificate")
            }
        }
    }
}

/// TLS connections, handshaken apart from the accept loop so that one slow client holds up
/// nobody.
struct TlsListener {
    connections: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    address: SocketAddr,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.connections.recv().await {
            Some(connection) => connection,
            // The accept loop ended (only with the server): wait to be dropped.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.address)
    }
}

/// Accepts TCP connections on `listener` and hands on those whose handshake succeeds.
async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    connections: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) {
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "webhook accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let connections = connections.clone();
        tokio::spawn(async move {
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                Ok(Ok(tls)) => {
                    let _ = connections.send((tls, peer)).await;
                }
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "webhook TLS handshake failed"),
                Err(_) => tracing::debug!(%peer, "webhook TLS handshake timed out"),
            }
        });
    }
}

/// Binds the webhook and serves it until `shutdown`; returns the server's task.
///
/// # Errors
///
/// The address cannot be bound, or TLS cannot be set up.
pub(crate) async fn serve(
    client: Client,
    config: WebhookConfig,
    executors: ExecutorSlot,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let certificate = Arc::new(Certificate::default());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .with_no_client_auth()
        .with_cert_resolver(certificate.clone());
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    let listener = TcpListener::bind(config.address).await?;
    let address = listener.local_addr()?;
    let (tx, rx) = mpsc::channel(64);
    let app = Router::new()
        .route(VALIDATE_PATH, post(review))
        .layer(DefaultBodyLimit::max(MAX_REVIEW_BYTES))
        .with_state(executors);
    let watch = tokio::spawn(watch_certificate(client, config, certificate));
    let accept = tokio::spawn(accept_loop(listener, TlsAcceptor::from(Arc::new(tls)), tx));
    tracing::info!(%address, "serving the admission webhook");
    Ok(tokio::spawn(async move {
        let served = axum::serve(
            TlsListener {
                connections: rx,
                address,
            },
            app,
        )
        .with_graceful_shutdown(shutdown)
        .await;
        if let Err(e) = served {
            tracing::warn!(error = %e, "admission webhook stopped");
        }
        accept.abort();
        watch.abort();
    }))
}

/// One AdmissionReview in, its answer out.
async fn review(
    State(executors): State<ExecutorSlot>,
    axum::Json(review): axum::Json<AdmissionReview<DynamicObject>>,
) -> axum::Json<AdmissionReview<DynamicObject>> {
    let request: AdmissionRequest<DynamicObject> = match review.try_into() {
        Ok(request) => request,
        Err(e) => return axum::Json(AdmissionResponse::invalid(e.to_string()).into_review()),
    };
    let response = AdmissionResponse::from(&request);
    let executor = executors.current();
    let verdict = tokio::time::timeout(REVIEW_TIMEOUT, admit(&executor, &request)).await;
    let response = match verdict {
        Ok(Ok(())) => response,
        Ok(Err(why)) => {
            tracing::info!(
                kind = %request.kind.kind,
                name = %request.name,
                namespace = request.namespace.as_deref().unwrap_or(""),
                "refused: {why}"
            );
            response.deny(why)
        }
        Err(_) => response.deny(format!(
            "capw could not finish its checks in {} s; try again",
            REVIEW_TIMEOUT.as_secs()
        )),
    };
    axum::Json(response.into_review())
}

/// The verdict on one create or update; anything else passes.
async fn admit(
    executor: &Executor,
    request: &AdmissionRequest<DynamicObject>,
) -> Result<(), String> {
    if !matches!(request.operation, Operation::Create | Operation::Update) {
        return Ok(());
    }
    let Some(object) = &request.object else {
        return Err("the review holds no object".into());
    };
    let json = |o: &DynamicObject| {
        let mut value = serde_json::to_value(o).map_err(|e| e.to_string())?;
        // The kind and version are the request's, whatever the object says.
        value["apiVersion"] = if request.kind.group.is_empty() {
            request.kind.version.clone()
        } else {
            format!("{}/{}", request.kind.group, request.kind.version)
        }
        .into();
        value["kind"] = request.kind.kind.clone().into();
        Ok::<_, String>(value)
    };
    let new = json(object)?;
    let old = request.old_object.as_ref().map(json).transpose()?;
    executor
        .admit(&new, old.as_ref())
        .await
        .map_err(|refusal| refusal.to_string())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::ByteString;

    use super::*;

    fn secret(crt: &str, key: &str) -> Secret {
        Secret {
            data: Some(BTreeMap::from([
                ("tls.crt".into(), ByteString(crt.as_bytes().to_vec())),
                ("tls.key".into(), ByteString(key.as_bytes().to_vec())),
            ])),
            ..Secret::default()
        }
    }

    #[test]
    fn a_key_pair_is_read_and_mistakes_are_named_without_the_key() {
        let one = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let two = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let key_one = one.signing_key.serialize_pem();
        let pair = key_pair(&secret(&one.cert.pem(), &key_one)).expect("usable");
        assert_eq!(pair.cert.len(), 1);

        let swapped = key_pair(&secret(&one.cert.pem(), &two.signing_key.serialize_pem()))
            .expect_err("refused");
        assert!(swapped.contains("does not match"), "{swapped}");

        let garbled = key_pair(&secret(&one.cert.pem(), "not a key"))
            .err()
            .unwrap();
        assert!(garbled.starts_with("tls.key"), "{garbled}");
        let missing = key_pair(&Secret::default()).expect_err("refused");
        assert_eq!(missing, "no tls.crt");
        for why in [swapped, garbled, missing] {
            assert!(!why.contains("PRIVATE KEY"), "{why}");
        }
    }
}
