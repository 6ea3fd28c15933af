//! A simcloud API client over the host's wasi:http.
//!
//! Every request carries the bearer token read from the granted secret and a timeout bounded
//! by what is left of the call's deadline, so a hung simcloud yields an error the provider
//! chose rather than a cancelled call. A non-2xx answer is a [`ClientError::Api`]; nothing is
//! retried here: the host retries a call whose error says it may.

use std::time::Duration;

use capw_sdk::Context;
use capw_sdk::http::{Request, Response};
use capw_sdk::secrets;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::config::SimcloudConfig;
use crate::error::{ClientError, api_error, request_name};

/// Time kept back from the call's deadline after the last request may end: enough for the
/// provider to turn a timeout into its answer before the host cancels the call.
pub const DEADLINE_MARGIN: Duration = Duration::from_millis(200);

/// How long one request may wait: `configured`, but never past the call's deadline less
/// [`DEADLINE_MARGIN`]. `None` when no time is left for a request.
pub fn request_timeout(configured: Duration, remaining: Duration) -> Option<Duration> {
    remaining
        .checked_sub(DEADLINE_MARGIN)
        .filter(|left| !left.is_zero())
        .map(|left| left.min(configured))
}

/// A query string from `pairs`, each value percent-encoded (RFC 3986 unreserved characters
/// stay as they are), e.g. `?cluster=c1&client_token=a%2Fb`.
pub fn query(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (key, value)) in pairs.iter().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(key);
        out.push('=');
        for byte in value.bytes() {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
                out.push(char::from(byte));
            } else {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    out
}

/// simcloud as one call sees it: its base URL, the token and the call's deadline, with `C` the
/// provider's config.
pub struct Client<'c, C> {
    ctx: &'c Context<'c, C>,
    token: String,
}

impl<'c, C: SimcloudConfig> Client<'c, C> {
    /// A client for the call `ctx`, with the token read from the secret `tokenSecret`.
    ///
    /// # Errors
    ///
    /// [`ClientError::Token`] when the secret is not granted or does not exist;
    /// [`ClientError::BadToken`] when it is empty or not UTF-8.
    pub fn connect(ctx: &'c Context<C>) -> Result<Self, ClientError> {
        let grant = ctx.config.token_secret();
        let bytes = secrets::get(grant).map_err(|source| ClientError::Token {
            grant: grant.to_owned(),
            source,
        })?;
        let token = String::from_utf8(bytes)
            .ok()
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| ClientError::BadToken {
                grant: grant.to_owned(),
            })?;
        Ok(Self { ctx, token })
    }

    /// `GET path` (with its query), its JSON answer read as `T`.
    ///
    /// # Errors
    ///
    /// Any [`ClientError`] but the token's.
    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, ClientError> {
        let response = self.send(Request::get(self.url(path)), "GET", path)?;
        decode(&response, "GET", path)
    }

    /// `POST path` with `body` as JSON, its JSON answer read as `T` (`200` and `201` alike).
    ///
    /// # Errors
    ///
    /// Any [`ClientError`] but the token's.
    pub fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ClientError> {
        let json = encode(body, "POST", path)?;
        let request = Request::post(self.url(path))
            .header("content-type", "application/json")
            .body(json);
        let response = self.send(request, "POST", path)?;
        decode(&response, "POST", path)
    }

    /// `PATCH path` with `body` as JSON, its JSON answer read as `T`.
    ///
    /// # Errors
    ///
    /// Any [`ClientError`] but the token's.
    pub fn patch<B: Serialize, T: DeserializeOwned>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, ClientError> {
        let json = encode(body, "PATCH", path)?;
        let request = Request::patch(self.url(path))
            .header("content-type", "application/json")
            .body(json);
        let response = self.send(request, "PATCH", path)?;
        decode(&response, "PATCH", path)
    }

    /// `DELETE path`; simcloud answers `204` whether or not the resource existed.
    ///
    /// # Errors
    ///
    /// Any [`ClientError`] but the token's.
    pub fn delete(&self, path: &str) -> Result<(), ClientError> {
        self.send(Request::delete(self.url(path)), "DELETE", path)
            .map(drop)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.ctx.config.base_url())
    }

    /// Sends `request` with the token and a bounded timeout; a non-2xx answer is an error.
    fn send(&self, request: Request, method: &str, path: &str) -> Result<Response, ClientError> {
        let timeout = request_timeout(self.ctx.config.request_timeout(), self.ctx.remaining())
            .ok_or_else(|| ClientError::NoTimeLeft {
                request: request_name(method, path),
            })?;
        let response = request
            .header("authorization", format!("Bearer {}", self.token))
            .header("accept", "application/json")
            .timeout(timeout)
            .send()
            .map_err(|source| ClientError::Transport {
                request: request_name(method, path),
                source,
            })?;
        if response.is_success() {
            Ok(response)
        } else {
            Err(api_error(&response, method, path))
        }
    }
}

fn encode<B: Serialize>(body: &B, method: &str, path: &str) -> Result<Vec<u8>, ClientError> {
    serde_json::to_vec(body).map_err(|source| ClientError::Encode {
        request: request_name(method, path),
        source,
    })
}

fn decode<T: DeserializeOwned>(
    response: &Response,
    method: &str,
    path: &str,
) -> Result<T, ClientError> {
    serde_json::from_slice(&response.body).map_err(|source| ClientError::Decode {
        request: request_name(method, path),
        status: response.status,
        source,
    })
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::ContextBuilder;
    use capw_sdk::types::{ErrorCode, ProviderError};

    use super::*;

    /// The three fields the client reads, as a provider's config holds them.
    struct Config {
        token_secret: &'static str,
    }

    impl SimcloudConfig for Config {
        fn endpoint(&self) -> &str {
            "http://127.0.0.1:1"
        }
        fn token_secret(&self) -> &str {
            self.token_secret
        }
        fn request_timeout_ms(&self) -> u32 {
            5_000
        }
    }

    #[test]
    fn natively_there_is_no_token_and_connect_names_the_grant() {
        let ctx = ContextBuilder::new().config(Config {
            token_secret: "my-token",
        });
        let Err(e) = Client::connect(&ctx) else {
            panic!("connected without a token");
        };
        assert!(matches!(&e, ClientError::Token { grant, .. } if grant == "my-token"));
        let e = ProviderError::from(e);
        assert_eq!((e.code, e.retryable), (ErrorCode::NotGranted, false));
        assert!(e.message.contains("secret `my-token`"), "{}", e.message);
    }

    #[test]
    fn timeouts_stop_short_of_the_deadline() {
        let five = Duration::from_secs(5);
        assert_eq!(request_timeout(five, Duration::from_secs(60)), Some(five));
        assert_eq!(
            request_timeout(five, Duration::from_millis(1200)),
            Some(Duration::from_millis(1000))
        );
        assert_eq!(request_timeout(five, DEADLINE_MARGIN), None);
        assert_eq!(request_timeout(five, Duration::ZERO), None);
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(
            query(&[("cluster", "c1"), ("client_token", "a/b c&d=é")]),
            "?cluster=c1&client_token=a%2Fb%20c%26d%3D%C3%A9"
        );
        assert_eq!(query(&[]), "");
    }
}
