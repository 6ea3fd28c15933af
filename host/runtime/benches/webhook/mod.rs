//! The example provider as a Cluster-API-Runtime-SDK-style webhook, for comparing a
//! component call with the call a webhook-based design makes: the provider's code compiled
//! natively and served by axum in this process, on loopback, on a runtime of its own; the host
//! posting JSON to it with one kept-alive connection, over plain HTTP and over HTTPS (rustls,
//! a self-signed certificate made at start).
//!
//! Start with [`Webhooks::start`]; [`wire`] has the JSON.

mod client;
mod server;
mod tls;
pub mod wire;

pub use client::WebhookClient;

/// The running webhook and a client for each of its two ports.
pub struct Webhooks {
    pub http: WebhookClient,
    pub https: WebhookClient,
    server: server::Server,
}

impl Webhooks {
    pub fn start() -> anyhow::Result<Self> {
        let tls = tls::self_signed()?;
        let server = server::Server::start(tls.server)?;
        let base = |scheme: &str, addr: std::net::SocketAddr| {
            format!("{scheme}://{}:{}", tls::HOST, addr.port())
        };
        Ok(Self {
            http: WebhookClient::new(base("http", server.http), tls.client.clone()),
            https: WebhookClient::new(base("https", server.https), tls.client),
            server,
        })
    }

    /// The benchmark names and their clients.
    pub fn variants(&self) -> [(&'static str, &WebhookClient); 2] {
        [("webhook-http", &self.http), ("webhook-https", &self.https)]
    }

    /// Connections the webhook accepted: `(http, https)`. One each when keep-alive held.
    pub fn connections(&self) -> (usize, usize) {
        self.server.connections()
    }
}
