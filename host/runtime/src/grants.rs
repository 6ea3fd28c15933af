//! What an operator grants a provider, and the checks that enforce it. Deny by default: an
//! empty [`Grants`] allows no outbound HTTP and no secret.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::limits::Limits;

/// The capabilities and limits of one provider.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    /// Authorities the provider may send HTTP requests to.
    pub http: Vec<HttpGrant>,
    /// Secrets the provider may read, by grant name. `None`: granted, but its value is not
    /// available (the Secret behind it does not exist); the provider is told `not-found`.
    pub secrets: BTreeMap<String, Option<Secret>>,
    /// The deadline and memory limit of each call.
    pub limits: Limits,
}

impl Grants {
    /// Whether a request to `scheme://host:port` is granted.
    pub fn allows_http(&self, scheme: &str, host: &str, port: Option<u16>) -> bool {
        self.http.iter().any(|g| g.allows(scheme, host, port))
    }

    /// Every secret value granted, for scrubbing them from what the provider says.
    pub(crate) fn secret_values(&self) -> impl Iterator<Item = &[u8]> {
        self.secrets.values().flatten().map(|s| s.expose())
    }
}

/// One authority a provider may reach: `https://api.example.com`, `http://127.0.0.1:8080`,
/// or `api.example.com:443` (either scheme).
///
/// # Guarantees
/// A request matches only if its host equals the grant's (ASCII case-insensitive, no
/// wildcards), its scheme equals the grant's (when the grant names one) and its port equals
/// the grant's, where a grant without a port means the scheme's default port (80 or 443).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpGrant {
    scheme: Option<String>,
    host: String,
    port: Option<u16>,
}

/// A grant string that is not `[scheme://]host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad HTTP grant {input:?}: {reason}")]
pub struct HttpGrantParseError {
    /// The grant string as written.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl FromStr for HttpGrant {
    type Err = HttpGrantParseError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let bad = |reason| HttpGrantParseError {
            input: input.to_string(),
            reason,
        };
        let (scheme, rest) = match input.split_once("://") {
            Some((s, rest)) => {
                let s = s.to_ascii_lowercase();
                if s != "http" && s != "https" {
                    return Err(bad("scheme must be http or https"));
                }
                (Some(s), rest)
            }
            None => (None, input),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains(['/', '?', '#', '@', '*']) {
            return Err(bad(
                "only scheme, host and port are allowed: no path, user or wildcard",
            ));
        }
        let authority: http::uri::Authority =
            rest.parse().map_err(|_| bad("not a valid host[:port]"))?;
        let host = authority
            .host()
            .trim_matches(['[', ']'])
            .to_ascii_lowercase();
        if host.is_empty() {
            return Err(bad("empty host"));
        }
        // `Authority` silently drops a port it cannot read, so read it here.
        let port = match authority
            .as_str()
            .strip_prefix(authority.host())
            .and_then(|rest| rest.strip_prefix(':'))
        {
            Some(p) => Some(p.parse::<u16>().map_err(|_| bad("port must be 0-65535"))?),
            None => None,
        };
        Ok(HttpGrant { scheme, host, port })
    }
}

impl HttpGrant {
    /// Whether this grant covers a request to `scheme://host[:port]`.
    pub fn allows(&self, scheme: &str, host: &str, port: Option<u16>) -> bool {
        let scheme = scheme.to_ascii_lowercase();
        if let Some(granted) = &self.scheme
            && *granted != scheme
        {
            return false;
        }
        let host = host.trim_matches(['[', ']']);
        if !self.host.eq_ignore_ascii_case(host) {
            return false;
        }
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return false,
        };
        let requested = port.unwrap_or(default_port);
        match self.port {
            Some(p) => p == requested,
            None => requested == default_port,
        }
    }
}

impl fmt::Display for HttpGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.scheme {
            write!(f, "{s}://")?;
        }
        f.write_str(&self.host)?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

/// Secret bytes. Its `Debug` never shows them.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl Secret {
    /// A secret of `bytes`.
    pub fn new(bytes: impl Into<Vec<u8>>) -> Self {
        Secret(bytes.into())
    }

    /// The secret's bytes; hand them only to the provider granted them.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret([redacted; {} bytes])", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(s: &str) -> HttpGrant {
        s.parse().unwrap()
    }

    #[test]
    fn exact_host_and_default_port() {
        let g = grant("https://api.example.com");
        assert!(g.allows("https", "api.example.com", None));
        assert!(g.allows("https", "API.Example.com", Some(443)));
        assert!(!g.allows("https", "api.example.com", Some(8443)));
        assert!(!g.allows("http", "api.example.com", None));
        assert!(!g.allows("https", "evil.api.example.com", None));
        assert!(!g.allows("https", "api.example.com.evil.test", None));
    }

    #[test]
    fn explicit_port_must_match() {
        let g = grant("http://127.0.0.1:8080");
        assert!(g.allows("http", "127.0.0.1", Some(8080)));
        assert!(!g.allows("http", "127.0.0.1", None));
        assert!(!g.allows("http", "127.0.0.1", Some(8081)));
        assert!(!g.allows("http", "127.0.0.2", Some(8080)));
    }

    #[test]
    fn schemeless_grant_allows_both_schemes_on_its_port() {
        let g = grant("sim.test:9000");
        assert!(g.allows("http", "sim.test", Some(9000)));
        assert!(g.allows("https", "sim.test", Some(9000)));
        assert!(!g.allows("https", "sim.test", None));
    }

    #[test]
    fn ipv6_hosts() {
        let g = grant("http://[::1]:8080");
        assert!(g.allows("http", "[::1]", Some(8080)));
        assert!(g.allows("http", "::1", Some(8080)));
    }

    #[test]
    fn refuses_paths_users_wildcards_and_odd_schemes() {
        for bad in [
            "https://api.example.com/v1",
            "https://user@api.example.com",
            "https://*.example.com",
            "ftp://example.com",
            "https://",
            "https://host:99999",
        ] {
            assert!(bad.parse::<HttpGrant>().is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn empty_grants_deny_everything() {
        let g = Grants::default();
        assert!(!g.allows_http("https", "example.com", None));
        assert!(!g.allows_http("http", "127.0.0.1", Some(80)));
    }

    #[test]
    fn secret_debug_is_redacted() {
        let s = Secret::new("hunter2");
        assert!(!format!("{s:?}").contains("hunter2"));
    }
}
