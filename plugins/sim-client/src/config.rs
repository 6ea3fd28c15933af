//! The fields every simcloud provider's config has (`endpoint`, `tokenSecret`,
//! `requestTimeoutMs`): their defaults, their rules, and what the client reads of them.
//!
//! Each provider keeps its own config type (its schema, its other fields and the order of its
//! errors); it implements [`SimcloudConfig`] and checks these fields with the functions here.

use std::time::Duration;

use capw_sdk::metadata::{FieldError, RequestedGrants};

/// The grant name the token is read from when `tokenSecret` is left out.
pub const DEFAULT_TOKEN_SECRET: &str = "simcloud-token";

/// `requestTimeoutMs` when left out.
pub const DEFAULT_REQUEST_TIMEOUT_MS: u32 = 5_000;

/// The largest `requestTimeoutMs` accepted: ten minutes, longer than any sane call deadline.
pub const MAX_REQUEST_TIMEOUT_MS: u32 = 600_000;

/// What a provider's config tells the [`Client`](crate::Client): where simcloud is, which
/// grant holds its token, and how long one request may wait.
pub trait SimcloudConfig {
    /// The `endpoint` field: simcloud's base URL, as configured.
    fn endpoint(&self) -> &str;

    /// The `tokenSecret` field: the secret grant that holds simcloud's bearer token.
    fn token_secret(&self) -> &str;

    /// The `requestTimeoutMs` field.
    fn request_timeout_ms(&self) -> u32;

    /// `endpoint` without a trailing `/`, ready for `/v1/...` to be appended.
    fn base_url(&self) -> &str {
        self.endpoint().trim_end_matches('/')
    }

    /// `requestTimeoutMs` as a duration.
    fn request_timeout(&self) -> Duration {
        Duration::from_millis(u64::from(self.request_timeout_ms()))
    }
}

/// `tokenSecret` when left out (a serde default).
pub fn default_token_secret() -> String {
    DEFAULT_TOKEN_SECRET.to_owned()
}

/// `requestTimeoutMs` when left out (a serde default).
pub fn default_request_timeout_ms() -> u32 {
    DEFAULT_REQUEST_TIMEOUT_MS
}

/// What a simcloud provider asks for: the token secret under its default grant name. The HTTP
/// authority is the config's `endpoint`, which differs per installation, so it is for the
/// operator to grant.
pub fn requested_grants() -> RequestedGrants {
    RequestedGrants {
        http_hosts: Vec::new(),
        secrets: vec![DEFAULT_TOKEN_SECRET.to_owned()],
    }
}

/// The problem with `endpoint`, at `/endpoint`.
///
/// # Guarantees
///
/// `None` means `endpoint` is an absolute `http`/`https` URL with a host and no user info,
/// query, fragment or whitespace.
pub fn endpoint_error(endpoint: &str) -> Option<FieldError> {
    check_endpoint(endpoint)
        .err()
        .map(|reason| FieldError::new("/endpoint", reason))
}

/// The problem with `tokenSecret`, at `/tokenSecret`: `None` unless it is blank.
pub fn token_secret_error(token_secret: &str) -> Option<FieldError> {
    token_secret.trim().is_empty().then(|| {
        FieldError::new(
            "/tokenSecret",
            "must name the secret grant that holds simcloud's token",
        )
    })
}

/// The problem with `requestTimeoutMs`, at `/requestTimeoutMs`: `None` when it is between 1
/// and [`MAX_REQUEST_TIMEOUT_MS`].
pub fn request_timeout_error(request_timeout_ms: u32) -> Option<FieldError> {
    (!(1..=MAX_REQUEST_TIMEOUT_MS).contains(&request_timeout_ms)).then(|| {
        FieldError::new(
            "/requestTimeoutMs",
            format!("must be between 1 and {MAX_REQUEST_TIMEOUT_MS}; got {request_timeout_ms}"),
        )
    })
}

/// Why `endpoint` cannot serve as simcloud's base URL.
fn check_endpoint(endpoint: &str) -> Result<(), String> {
    let Some((scheme, rest)) = endpoint.split_once("://") else {
        return Err(format!(
            "must be an absolute http:// or https:// URL, e.g. http://127.0.0.1:8080; got `{endpoint}`"
        ));
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(format!("scheme must be http or https; got `{scheme}`"));
    }
    if endpoint
        .chars()
        .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err("must not contain whitespace or control characters".to_owned());
    }
    if rest.contains(['?', '#']) {
        return Err("must not have a query or a fragment".to_owned());
    }
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains('@') {
        return Err("must not carry user info; the token comes from `tokenSecret`".to_owned());
    }
    let host = match authority.rsplit_once(':') {
        // `[::1]:8080` splits at the port; a bare `[::1]` has its last colon inside brackets.
        Some((host, port)) if !port.contains(']') => {
            if port.parse::<u16>().is_err() {
                return Err(format!("port `{port}` is not a number from 0 to 65535"));
            }
            host
        }
        _ => authority,
    };
    if host.is_empty() {
        return Err("has no host".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Endpoint(&'static str);

    impl SimcloudConfig for Endpoint {
        fn endpoint(&self) -> &str {
            self.0
        }
        fn token_secret(&self) -> &str {
            DEFAULT_TOKEN_SECRET
        }
        fn request_timeout_ms(&self) -> u32 {
            1_500
        }
    }

    #[test]
    fn the_base_url_drops_a_trailing_slash_and_the_timeout_is_a_duration() {
        let config = Endpoint("http://127.0.0.1:8080/");
        assert_eq!(config.base_url(), "http://127.0.0.1:8080");
        assert_eq!(Endpoint("http://sim").base_url(), "http://sim");
        assert_eq!(config.request_timeout(), Duration::from_millis(1_500));
    }

    #[test]
    fn accepts_good_endpoints() {
        for endpoint in [
            "http://127.0.0.1:8080",
            "https://sim.example.test",
            "HTTPS://sim.example.test:443/api/",
            "http://[::1]:8080",
            "http://[::1]",
        ] {
            assert!(endpoint_error(endpoint).is_none(), "{endpoint}");
        }
    }

    #[test]
    fn refuses_bad_endpoints_saying_why() {
        for (endpoint, why) in [
            (
                "127.0.0.1:8080",
                "must be an absolute http:// or https:// URL",
            ),
            ("ftp://sim", "scheme must be http or https; got `ftp`"),
            ("http://", "has no host"),
            ("http://:8080", "has no host"),
            ("http://u:p@sim", "must not carry user info"),
            ("http://sim/?x=1", "must not have a query or a fragment"),
            ("http://sim#f", "must not have a query or a fragment"),
            ("http://sim:port", "port `port` is not a number"),
            ("http://si m", "must not contain whitespace"),
        ] {
            let Some(error) = endpoint_error(endpoint) else {
                panic!("{endpoint} accepted");
            };
            assert_eq!(error.path, "/endpoint", "{endpoint}");
            assert!(error.message.contains(why), "{endpoint}: {}", error.message);
        }
    }

    #[test]
    fn a_blank_token_secret_and_a_timeout_out_of_range_are_refused() {
        assert!(token_secret_error("simcloud-token").is_none());
        let blank = token_secret_error(" ").map(|e| e.path);
        assert_eq!(blank.as_deref(), Some("/tokenSecret"));
        assert!(request_timeout_error(1).is_none());
        assert!(request_timeout_error(MAX_REQUEST_TIMEOUT_MS).is_none());
        for bad in [0, MAX_REQUEST_TIMEOUT_MS + 1] {
            let Some(error) = request_timeout_error(bad) else {
                panic!("{bad} accepted");
            };
            assert_eq!(error.path, "/requestTimeoutMs");
            assert!(
                error.message.ends_with(&format!("got {bad}")),
                "{}",
                error.message
            );
        }
    }

    #[test]
    fn the_grant_asked_for_is_the_default_token_secret() {
        let grants = requested_grants();
        assert_eq!(grants.secrets, [DEFAULT_TOKEN_SECRET]);
        assert!(grants.http_hosts.is_empty());
        assert_eq!(default_token_secret(), "simcloud-token");
        assert_eq!(default_request_timeout_ms(), 5_000);
    }
}
