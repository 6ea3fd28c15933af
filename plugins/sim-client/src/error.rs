//! Why a simcloud request failed, and what each failure tells the host.

use std::time::Duration;

use capw_sdk::http::{HttpError, Response};
use capw_sdk::secrets::SecretError;
use capw_sdk::types::{ErrorCode, ProviderError};
use capw_sim_api::{ErrorBody, ErrorDetail};

/// The most of a non-JSON error body quoted in an error message.
const MAX_QUOTED_BODY: usize = 200;

/// Why a simcloud request failed.
///
/// Messages name the request (`POST /v1/instances`) and what simcloud said; never the token
/// or a request body.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The token secret could not be read.
    #[error("reading simcloud's token from secret `{grant}`: {source}")]
    Token {
        /// The grant name from `tokenSecret`.
        grant: String,
        /// What the host said.
        #[source]
        source: SecretError,
    },
    /// The token secret is empty or not UTF-8.
    #[error("secret `{grant}` does not hold a simcloud token: it is empty or not UTF-8")]
    BadToken {
        /// The grant name from `tokenSecret`.
        grant: String,
    },
    /// Too little of the call's deadline is left to send the request.
    #[error("{request}: not sent, the call's deadline is (nearly) over")]
    NoTimeLeft {
        /// Method and path.
        request: String,
    },
    /// No response: not granted, unreachable, timed out.
    #[error("{request}: {source}")]
    Transport {
        /// Method and path.
        request: String,
        /// What the transport said.
        #[source]
        source: HttpError,
    },
    /// simcloud answered with an error status.
    #[error("{request}: simcloud answered HTTP {status} {}: {}{}", .detail.code, .detail.message,
        field_suffix(.detail.field.as_deref()))]
    Api {
        /// Method and path.
        request: String,
        /// The HTTP status.
        status: u16,
        /// simcloud's error body (or a stand-in when the body was not one).
        detail: ErrorDetail,
        /// The response's `Retry-After`, when it had one in seconds.
        retry_after: Option<Duration>,
    },
    /// A request body that does not serialise (a bug of the provider).
    #[error("{request}: cannot encode the request body")]
    Encode {
        /// Method and path.
        request: String,
        /// What serde found wrong.
        #[source]
        source: serde_json::Error,
    },
    /// A success answer that is not the JSON expected.
    #[error("{request}: unreadable answer (HTTP {status})")]
    Decode {
        /// Method and path.
        request: String,
        /// The HTTP status.
        status: u16,
        /// What serde found wrong.
        #[source]
        source: serde_json::Error,
    },
}

fn field_suffix(field: Option<&str>) -> String {
    field.map(|f| format!(" (field `{f}`)")).unwrap_or_default()
}

impl ClientError {
    /// Whether simcloud answered `status` with error code `code`.
    pub fn is_api(&self, status: u16, code: &str) -> bool {
        matches!(self, ClientError::Api { status: s, detail, .. } if *s == status && detail.code == code)
    }

    /// simcloud's own message, for an [`ClientError::Api`].
    pub fn api_message(&self) -> Option<&str> {
        match self {
            ClientError::Api { detail, .. } => Some(&detail.message),
            _ => None,
        }
    }
}

/// What each failure tells the host.
///
/// - 429 and 503: retryable `unavailable`, with `Retry-After` as `retry-after-ms`;
/// - 401 and 403: permanent `unauthorized` (the token is wrong);
/// - 409: `conflict`, permanent for `idempotency_mismatch` and `immutable_field` (the same
///   call can never succeed), retryable otherwise;
/// - other 4xx: permanent `invalid-input`;
/// - other statuses, and unreadable answers: retryable (`unavailable`, `internal`); a body
///   that cannot be encoded: permanent `internal`;
/// - transport failures as the SDK maps them: a denied host is a permanent `not-granted`,
///   unreachable or timed out a retryable `unavailable`;
/// - a secret not granted: permanent `not-granted`; granted but missing: retryable; empty:
///   permanent `invalid-input`; no time left: retryable `unavailable`.
impl From<ClientError> for ProviderError {
    fn from(e: ClientError) -> Self {
        let message = e.to_string();
        match e {
            ClientError::Token { source, .. } => {
                let mut error = ProviderError::from(source);
                error.message = message;
                error
            }
            ClientError::BadToken { .. } => {
                ProviderError::permanent(ErrorCode::InvalidInput, message)
            }
            ClientError::NoTimeLeft { .. } => {
                ProviderError::retryable(ErrorCode::Unavailable, message)
            }
            ClientError::Transport { source, .. } => {
                let mut error = ProviderError::from(source);
                error.message = message;
                error
            }
            ClientError::Api {
                status,
                detail,
                retry_after,
                ..
            } => {
                let (code, retryable) = classify(status, &detail.code);
                let error = if retryable {
                    ProviderError::retryable(code, message)
                } else {
                    ProviderError::permanent(code, message)
                };
                match retry_after {
                    Some(after) if retryable => error.retry_after(after),
                    _ => error,
                }
            }
            ClientError::Encode { .. } => ProviderError::permanent(ErrorCode::Internal, message),
            ClientError::Decode { .. } => ProviderError::retryable(ErrorCode::Internal, message),
        }
    }
}

/// The contract's error code for an HTTP `status` with simcloud error `code`, and whether
/// the same call may succeed later.
pub fn classify(status: u16, code: &str) -> (ErrorCode, bool) {
    match status {
        429 | 503 => (ErrorCode::Unavailable, true),
        401 | 403 => (ErrorCode::Unauthorized, false),
        409 => (
            ErrorCode::Conflict,
            !matches!(code, "idempotency_mismatch" | "immutable_field"),
        ),
        400..=499 => (ErrorCode::InvalidInput, false),
        _ => (ErrorCode::Unavailable, true),
    }
}

/// `POST /v1/instances`: the method and the path without its query, which says enough.
pub(crate) fn request_name(method: &str, path: &str) -> String {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    format!("{method} {path}")
}

/// The error an unsuccessful `response` means, with simcloud's error body when it sent one.
pub fn api_error(response: &Response, method: &str, path: &str) -> ClientError {
    let detail = match serde_json::from_slice::<ErrorBody>(&response.body) {
        Ok(body) => body.error,
        Err(_) => ErrorDetail {
            code: format!("http_{}", response.status),
            message: quote_body(&response.body),
            field: None,
        },
    };
    ClientError::Api {
        request: request_name(method, path),
        status: response.status,
        detail,
        retry_after: response.retry_after(),
    }
}

/// A body that is not simcloud's error JSON (a proxy's page, say), cut short for a message.
fn quote_body(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match text.char_indices().nth(MAX_QUOTED_BODY) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None if text.is_empty() => "(no body)".to_owned(),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
                .collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    fn error_json(code: &str, message: &str) -> String {
        serde_json::json!({"error": {"code": code, "message": message}}).to_string()
    }

    fn provider_error(status: u16, headers: &[(&str, &str)], code: &str) -> ProviderError {
        let r = response(status, headers, &error_json(code, "said simcloud"));
        ProviderError::from(api_error(&r, "POST", "/v1/instances?cluster=c1"))
    }

    #[test]
    fn throttling_is_retryable_after_retry_after() {
        let e = provider_error(429, &[("retry-after", "2")], "rate_limited");
        assert_eq!(e.code, ErrorCode::Unavailable);
        assert!(e.retryable);
        assert_eq!(e.retry_after_ms, Some(2000));
        assert!(e.message.contains("POST /v1/instances:"), "{}", e.message);
        assert!(!e.message.contains("cluster=c1"), "{}", e.message);
        assert!(
            e.message.contains("rate_limited: said simcloud"),
            "{}",
            e.message
        );

        let e = provider_error(503, &[], "unavailable");
        assert_eq!(
            (e.code, e.retryable, e.retry_after_ms),
            (ErrorCode::Unavailable, true, None)
        );
    }

    #[test]
    fn the_request_is_named_without_its_query() {
        let r = response(429, &[], &error_json("rate_limited", "slow down"));
        let e = api_error(&r, "POST", "/v1/managed-control-planes?cluster=c1");
        let message = e.to_string();
        assert!(
            message.starts_with("POST /v1/managed-control-planes: "),
            "{message}"
        );
        assert_eq!(request_name("GET", "/v1/zones"), "GET /v1/zones");
    }

    #[test]
    fn server_errors_are_retryable_client_errors_permanent() {
        let e = provider_error(500, &[], "internal");
        assert_eq!((e.code, e.retryable), (ErrorCode::Unavailable, true));
        let e = provider_error(401, &[], "unauthorized");
        assert_eq!((e.code, e.retryable), (ErrorCode::Unauthorized, false));
        let e = provider_error(400, &[], "invalid_request");
        assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
        let e = provider_error(404, &[], "not_found");
        assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
    }

    #[test]
    fn conflicts_are_retryable_unless_they_can_never_resolve() {
        assert_eq!(classify(409, "conflict"), (ErrorCode::Conflict, true));
        assert_eq!(
            classify(409, "failed_precondition"),
            (ErrorCode::Conflict, true)
        );
        assert_eq!(
            classify(409, "idempotency_mismatch"),
            (ErrorCode::Conflict, false)
        );
        assert_eq!(
            classify(409, "immutable_field"),
            (ErrorCode::Conflict, false)
        );
        // A retry hint on a permanent error would contradict it.
        let e = provider_error(409, &[("retry-after", "3")], "idempotency_mismatch");
        assert_eq!((e.retryable, e.retry_after_ms), (false, None));
    }

    #[test]
    fn the_field_at_fault_is_named() {
        let body = serde_json::json!({"error": {"code": "invalid_request",
            "message": "zone: unknown zone `z`", "field": "zone"}})
        .to_string();
        let e = api_error(&response(400, &[], &body), "POST", "/v1/instances");
        assert!(e.is_api(400, "invalid_request"));
        assert!(e.to_string().ends_with("(field `zone`)"), "{e}");
        assert_eq!(e.api_message(), Some("zone: unknown zone `z`"));
    }

    #[test]
    fn a_body_that_is_not_simcloud_json_is_quoted_short() {
        let long = "x".repeat(1000);
        let e = api_error(&response(502, &[], &long), "GET", "/v1/zones");
        assert!(e.is_api(502, "http_502"));
        assert!(e.to_string().len() < 300, "{e}");
        let e = api_error(&response(502, &[], ""), "GET", "/v1/zones");
        assert!(e.to_string().contains("(no body)"), "{e}");
    }

    #[test]
    fn transport_and_secret_failures_keep_the_sdk_meaning() {
        let denied = ClientError::Transport {
            request: "GET /v1/zones".into(),
            source: HttpError::Denied {
                authority: "sim:80".into(),
            },
        };
        let e = ProviderError::from(denied);
        assert_eq!((e.code, e.retryable), (ErrorCode::NotGranted, false));
        assert!(e.message.starts_with("GET /v1/zones: "), "{}", e.message);

        let timeout = ClientError::Transport {
            request: "GET /v1/zones".into(),
            source: HttpError::Timeout {
                authority: "sim:80".into(),
                detail: "HttpResponseTimeout".into(),
            },
        };
        assert!(ProviderError::from(timeout).retryable);

        let e = ProviderError::from(ClientError::Token {
            grant: "simcloud-token".into(),
            source: SecretError::NotGranted,
        });
        assert_eq!((e.code, e.retryable), (ErrorCode::NotGranted, false));
        assert!(e.message.contains("`simcloud-token`"), "{}", e.message);
        let e = ProviderError::from(ClientError::Token {
            grant: "t".into(),
            source: SecretError::NotFound,
        });
        assert!(e.retryable);
        let e = ProviderError::from(ClientError::BadToken { grant: "t".into() });
        assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
    }

    #[test]
    fn no_time_left_is_retryable() {
        let e = ProviderError::from(ClientError::NoTimeLeft {
            request: "GET /v1/zones".into(),
        });
        assert_eq!((e.code, e.retryable), (ErrorCode::Unavailable, true));
    }
}
