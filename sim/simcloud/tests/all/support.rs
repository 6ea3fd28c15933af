//! A sim per test, a client for it, and fixtures as builders.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use capw_simcloud::fixtures::{CA_HASH, TOKEN as BOOTSTRAP_TOKEN};
use capw_simcloud::model::{ErrorBody, Instance, LoadBalancer};
use capw_simcloud::{SimCloud, SimCloudConfig, SimCloudHandle, Timings};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The API token of test sims.
pub const API_TOKEN: &str = "test-api-token";

/// How long a wait for a state change may take before the test fails. Generous: the delays
/// are milliseconds, but the machine may be busy.
const WAIT_LIMIT: Duration = Duration::from_secs(20);

/// A config for a sim whose every delay is a few milliseconds.
pub fn fast_config() -> SimCloudConfig {
    SimCloudConfig::new(API_TOKEN).with_timings(Timings::uniform(Duration::from_millis(5)))
}

/// A running sim and a client authenticated for it.
pub struct Sim {
    pub handle: SimCloudHandle,
    pub client: reqwest::Client,
}

impl Sim {
    /// A fast sim, in memory, without faults.
    pub async fn start() -> Sim {
        Sim::with(fast_config()).await
    }

    /// A sim with `config`.
    pub async fn with(config: SimCloudConfig) -> Sim {
        let handle = SimCloud::start(config).await.expect("start the sim");
        Sim {
            handle,
            client: capw_test_support::http(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.handle.base_url())
    }

    /// An authenticated request.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(API_TOKEN)
    }

    pub async fn send(&self, method: Method, path: &str, body: Option<Value>) -> Response {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.json(&body);
        }
        request.send().await.expect("send the request")
    }

    pub async fn get(&self, path: &str) -> Response {
        self.send(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Response {
        self.send(Method::POST, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Response {
        self.send(Method::DELETE, path, None).await
    }

    /// A network, a load balancer (`lb-N.sim:6443`) and a bootstrap registration for
    /// `cluster`; the load balancer.
    pub async fn setup_cluster(&self, cluster: &str) -> LoadBalancer {
        let r = self
            .post(
                "/v1/networks",
                json!({"cluster": cluster, "name": format!("{cluster}-net")}),
            )
            .await;
        assert_eq!(r.status(), StatusCode::CREATED);
        let r = self
            .post(
                "/v1/load-balancers",
                json!({"cluster": cluster, "name": format!("{cluster}-lb"), "client_token": format!("{cluster}-lb")}),
            )
            .await;
        assert_eq!(r.status(), StatusCode::CREATED);
        let lb: LoadBalancer = body(r).await;
        let r = self
            .send(
                Method::PUT,
                &format!("/v1/clusters/{cluster}/bootstrap"),
                Some(json!({"token": BOOTSTRAP_TOKEN, "ca_cert_hash": CA_HASH})),
            )
            .await;
        assert_eq!(r.status(), StatusCode::OK);
        lb
    }

    /// Creates an instance; its status and body.
    pub async fn create_instance(
        &self,
        token: &str,
        cluster: &str,
        role: &str,
        data: &str,
    ) -> (StatusCode, Instance) {
        let r = self
            .post("/v1/instances", instance_body(token, cluster, role, data))
            .await;
        let status = r.status();
        assert!(
            status.is_success(),
            "create instance: {status}: {:?}",
            r.text().await
        );
        (status, body(r).await)
    }

    /// Polls instance `id` until it is `running` or `failed`.
    pub async fn settled_instance(&self, id: &str) -> Instance {
        self.wait_for(&format!("/v1/instances/{id}"), |i: &Instance| {
            matches!(
                i.state,
                capw_simcloud::model::InstanceState::Running
                    | capw_simcloud::model::InstanceState::Failed
            )
        })
        .await
    }

    /// Polls `path` until its body satisfies `done`; fails the test after [`WAIT_LIMIT`].
    pub async fn wait_for<T: DeserializeOwned + std::fmt::Debug>(
        &self,
        path: &str,
        done: impl Fn(&T) -> bool,
    ) -> T {
        let deadline = tokio::time::Instant::now() + WAIT_LIMIT;
        loop {
            let r = self.get(path).await;
            assert_eq!(r.status(), StatusCode::OK, "GET {path}");
            let value: T = body(r).await;
            if done(&value) {
                return value;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{path} did not settle: {value:?}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// The JSON of a create-instance request.
pub fn instance_body(token: &str, cluster: &str, role: &str, data: &str) -> Value {
    json!({
        "client_token": token,
        "name": format!("{cluster}-{token}"),
        "cluster": cluster,
        "role": role,
        "bootstrap_data": BASE64.encode(data),
    })
}

/// The body of `r` as a `T`.
pub async fn body<T: DeserializeOwned>(r: Response) -> T {
    let text = r.text().await.expect("read the body");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The error body of `r`, after checking its status.
pub async fn error(r: Response, status: StatusCode) -> ErrorBody {
    assert_eq!(r.status(), status);
    body(r).await
}
