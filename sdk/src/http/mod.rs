//! A small blocking HTTP client over the host's `wasi:http/outgoing-handler` (0.2).
//!
//! The host lets a provider reach only the authorities (`host` or `host:port`) granted to it in
//! its WasmProvider; any other request fails with [`HttpError::Denied`]. Calls must not wait
//! for slow work to finish: when a backend says "later", answer `in-progress` or a retryable
//! error (see [`Response::throttled`]) and let the host call again.
//!
//! ```no_run
//! use capw_sdk::http::Request;
//!
//! # fn main() -> Result<(), capw_sdk::http::HttpError> {
//! let response = Request::post("https://api.cloud.test/v1/instances")
//!     .header("content-type", "application/json")
//!     .body(br#"{"name":"m1"}"#.to_vec())
//!     .send()?;
//! if let Some(error) = response.throttled() {
//!     // Hand the backend's Retry-After to the host instead of sleeping here.
//!     # let _ = error;
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Outside a wasm32 component (a provider's native unit tests) there is no host: every
//! request fails with [`HttpError::Other`].

use std::time::Duration;

use crate::types::{ErrorCode, ProviderError};

#[cfg(target_arch = "wasm32")]
mod wasi;

/// An HTTP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `GET`
    Get,
    /// `HEAD`
    Head,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `PATCH`
    Patch,
    /// `DELETE`
    Delete,
}

/// Why a request got no response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The host refused the request: the authority is not granted to this provider.
    /// Permanent until the operator changes the grants.
    #[error("request to `{authority}` denied: the host is not granted to this provider")]
    Denied {
        /// The authority the request went to.
        authority: String,
    },
    /// No connection: DNS failure, refused, reset or unreachable destination. Usually
    /// transient.
    #[error("cannot connect to `{authority}`: {detail}")]
    Connect {
        /// The authority the request went to.
        authority: String,
        /// The transport's error code.
        detail: String,
    },
    /// Connecting, the first byte, or a later byte took longer than allowed.
    #[error("request to `{authority}` timed out: {detail}")]
    Timeout {
        /// The authority the request went to.
        authority: String,
        /// The transport's error code.
        detail: String,
    },
    /// The URL is not an absolute `http://` or `https://` URL this client can send.
    #[error("invalid url `{url}`: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A header name or value the host refused.
    #[error("invalid or forbidden header `{name}`")]
    InvalidHeader {
        /// The header's name.
        name: String,
    },
    /// Any other failure of the transport (TLS, protocol, an incomplete response), or no host
    /// at all outside a wasm32 component.
    #[error("http request failed: {0}")]
    Other(String),
}

/// How a failed request answers a provider call: a denied host is a missing grant, a bad URL
/// bad input, and transport failures are retryable.
impl From<HttpError> for ProviderError {
    fn from(e: HttpError) -> Self {
        let message = e.to_string();
        match e {
            HttpError::Denied { .. } => ProviderError::permanent(ErrorCode::NotGranted, message),
            HttpError::Connect { .. } | HttpError::Timeout { .. } => {
                ProviderError::retryable(ErrorCode::Unavailable, message)
            }
            HttpError::InvalidUrl { .. } | HttpError::InvalidHeader { .. } => {
                ProviderError::permanent(ErrorCode::InvalidInput, message)
            }
            HttpError::Other(_) => ProviderError::retryable(ErrorCode::Internal, message),
        }
    }
}

/// A request being built; [`Request::send`] sends it and blocks until the whole response is
/// read.
#[derive(Debug, Clone)]
pub struct Request {
    method: Method,
    url: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    timeout: Option<Duration>,
}

impl Request {
    /// A request with `method` to `url`, an absolute `http://` or `https://` URL. The URL is
    /// checked by [`Request::send`].
    pub fn new(method: Method, url: impl Into<String>) -> Self {
        Self {
            method,
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
            timeout: None,
        }
    }

    /// A `GET` request to `url`.
    pub fn get(url: impl Into<String>) -> Self {
        Self::new(Method::Get, url)
    }

    /// A `HEAD` request to `url`.
    pub fn head(url: impl Into<String>) -> Self {
        Self::new(Method::Head, url)
    }

    /// A `POST` request to `url`.
    pub fn post(url: impl Into<String>) -> Self {
        Self::new(Method::Post, url)
    }

    /// A `PUT` request to `url`.
    pub fn put(url: impl Into<String>) -> Self {
        Self::new(Method::Put, url)
    }

    /// A `PATCH` request to `url`.
    pub fn patch(url: impl Into<String>) -> Self {
        Self::new(Method::Patch, url)
    }

    /// A `DELETE` request to `url`.
    pub fn delete(url: impl Into<String>) -> Self {
        Self::new(Method::Delete, url)
    }

    /// Adds a header; a name given twice sends both values.
    pub fn header(mut self, name: impl Into<String>, value: impl AsRef<[u8]>) -> Self {
        self.headers.push((name.into(), value.as_ref().to_vec()));
        self
    }

    /// Sets the body. A non-empty body gets a `content-length` header unless one is set.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// Bounds the connect time, the time to the first response byte and the time between
    /// bytes, each by `timeout`. Without it the host's defaults and the call's deadline apply;
    /// [`Context::remaining`](crate::Context::remaining) is a good value.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The request's method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The URL as given, not yet checked.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends the request and reads the whole response.
    ///
    /// Any status is a response, 4xx and 5xx included; see [`Response::error_for_status`].
    ///
    /// # Errors
    ///
    /// [`HttpError`] when no response arrived: the authority is not granted, the URL or a
    /// header is invalid, the connection failed or timed out.
    pub fn send(self) -> Result<Response, HttpError> {
        let target = Target::parse(&self.url)?;
        transport(self, target)
    }
}

#[cfg(target_arch = "wasm32")]
fn transport(request: Request, target: Target) -> Result<Response, HttpError> {
    wasi::send(request, target)
}

#[cfg(not(target_arch = "wasm32"))]
fn transport(_request: Request, _target: Target) -> Result<Response, HttpError> {
    Err(HttpError::Other(String::from(
        "no wasi:http host: outbound HTTP works only inside a wasm32 component",
    )))
}

/// A complete response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code, e.g. 200.
    pub status: u16,
    /// Header names (lowercase, as wasi:http gives them) and raw values, in received order.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The whole body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of header `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as UTF-8 text.
    ///
    /// # Errors
    ///
    /// [`std::str::Utf8Error`] when the body is not UTF-8.
    pub fn text(&self) -> Result<&str, std::str::Utf8Error> {
        std::str::from_utf8(&self.body)
    }

    /// `Retry-After` in its delta-seconds form. The HTTP-date form gives `None`, and so does a
    /// missing or malformed header: the host's own backoff then applies.
    pub fn retry_after(&self) -> Option<Duration> {
        let value = std::str::from_utf8(self.header("retry-after")?).ok()?;
        value.trim().parse::<u64>().ok().map(Duration::from_secs)
    }

    /// For 429 (Too Many Requests) and 503 (Service Unavailable), the retryable `unavailable`
    /// error to answer the call with, carrying the response's `Retry-After` as
    /// `retry-after-ms`; `None` for every other status.
    pub fn throttled(&self) -> Option<ProviderError> {
        if !matches!(self.status, 429 | 503) {
            return None;
        }
        let error = ProviderError::retryable(
            ErrorCode::Unavailable,
            format!("backend answered HTTP {}", self.status),
        );
        Some(match self.retry_after() {
            Some(after) => error.retry_after(after),
            None => error,
        })
    }

    /// The response itself when it is 2xx; otherwise the error that status means for a
    /// provider call.
    ///
    /// # Errors
    ///
    /// 429 and 503 as [`Response::throttled`]; 401 and 403 `unauthorized`; 409 a retryable
    /// `conflict`; other 4xx `invalid-input`; other statuses a retryable `unavailable`.
    pub fn error_for_status(self) -> Result<Self, ProviderError> {
        if self.is_success() {
            return Ok(self);
        }
        if let Some(throttled) = self.throttled() {
            return Err(throttled);
        }
        let message = format!("backend answered HTTP {}", self.status);
        Err(match self.status {
            401 | 403 => ProviderError::permanent(ErrorCode::Unauthorized, message),
            409 => ProviderError::retryable(ErrorCode::Conflict, message),
            400..=499 => ProviderError::permanent(ErrorCode::InvalidInput, message),
            _ => ProviderError::retryable(ErrorCode::Unavailable, message),
        })
    }
}

/// Where a request goes, split as wasi:http wants it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    https: bool,
    authority: String,
    path_with_query: String,
}

impl Target {
    fn parse(url: &str) -> Result<Self, HttpError> {
        let invalid = |reason| HttpError::InvalidUrl {
            url: url.to_owned(),
            reason,
        };
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| invalid("not an absolute URL"))?;
        let https = if scheme.eq_ignore_ascii_case("https") {
            true
        } else if scheme.eq_ignore_ascii_case("http") {
            false
        } else {
            return Err(invalid("scheme must be http or https"));
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        if authority.is_empty() {
            return Err(invalid("missing host"));
        }
        // `user@host` hides the real destination from a reader of the config; the grants are
        // by host, so say plainly where a request goes.
        if authority.contains('@') {
            return Err(invalid("user info is not supported"));
        }
        let tail = tail.split_once('#').map_or(tail, |(before, _)| before);
        if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(invalid("contains whitespace or control characters"));
        }
        let path_with_query = if tail.starts_with('/') {
            tail.to_owned()
        } else {
            format!("/{tail}")
        };
        Ok(Self {
            https,
            authority: authority.to_owned(),
            path_with_query,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(url: &str) -> Target {
        match Target::parse(url) {
            Ok(t) => t,
            Err(e) => panic!("{url}: {e}"),
        }
    }

    #[test]
    fn parses_absolute_urls() {
        let t = target("https://api.cloud.test:8443/v1/x?y=1#frag");
        assert!(t.https);
        assert_eq!(t.authority, "api.cloud.test:8443");
        assert_eq!(t.path_with_query, "/v1/x?y=1");

        let t = target("HTTP://host");
        assert!(!t.https);
        assert_eq!(t.path_with_query, "/");

        assert_eq!(target("http://host?q").path_with_query, "/?q");
    }

    #[test]
    fn rejects_what_it_cannot_send() {
        for url in [
            "host/x",
            "ftp://host/",
            "https:///x",
            "https://user@host/",
            "https://host/a b",
        ] {
            assert!(
                matches!(Target::parse(url), Err(HttpError::InvalidUrl { .. })),
                "{url}"
            );
        }
    }

    fn response(status: u16, headers: &[(&str, &str)]) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
                .collect(),
            body: Vec::new(),
        }
    }

    #[test]
    fn throttled_carries_retry_after() {
        let e = response(429, &[("Retry-After", " 7 ")]).throttled();
        let e = e.unwrap_or_else(|| panic!("429 is throttled"));
        assert!(e.retryable);
        assert_eq!(e.code, ErrorCode::Unavailable);
        assert_eq!(e.retry_after_ms, Some(7000));

        let e = response(503, &[]).throttled();
        assert_eq!(
            e.map(|e| (e.retryable, e.retry_after_ms)),
            Some((true, None))
        );

        let e = response(503, &[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")]).throttled();
        assert_eq!(e.and_then(|e| e.retry_after_ms), None);

        assert!(response(500, &[("retry-after", "3")]).throttled().is_none());
    }

    #[test]
    fn error_for_status_maps_codes() {
        let code = |status| {
            response(status, &[])
                .error_for_status()
                .err()
                .map(|e| (e.code, e.retryable))
        };
        assert_eq!(code(200), None);
        assert_eq!(code(403), Some((ErrorCode::Unauthorized, false)));
        assert_eq!(code(409), Some((ErrorCode::Conflict, true)));
        assert_eq!(code(404), Some((ErrorCode::InvalidInput, false)));
        assert_eq!(code(502), Some((ErrorCode::Unavailable, true)));
        assert_eq!(code(429), Some((ErrorCode::Unavailable, true)));
    }

    #[test]
    fn denied_says_denied() {
        let e = HttpError::Denied {
            authority: "evil.test".into(),
        };
        assert!(e.to_string().contains("denied"));
        assert_eq!(ProviderError::from(e).code, ErrorCode::NotGranted);
    }

    #[test]
    fn no_host_natively() {
        assert!(matches!(
            Request::get("http://localhost/").send(),
            Err(HttpError::Other(_))
        ));
    }
}
