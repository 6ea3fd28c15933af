//! The cluster endpoint as kubeadm and kubeconfig spell it.

use capw_sdk::types::Endpoint;

/// An endpoint no node could reach.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// Empty host, or one with whitespace, a slash or brackets in it.
    #[error("endpoint host `{host}` is not a host name or IP address")]
    BadHost {
        /// The host as given.
        host: String,
    },
    /// Port 0.
    #[error("endpoint port must not be 0")]
    ZeroPort,
}

/// `host:port`, with an IPv6 literal in brackets (`[fd00::1]:6443`), as kubeadm's
/// `controlPlaneEndpoint` and the authority of a URL want it.
///
/// # Errors
///
/// [`EndpointError`] for a host no URL could carry or port 0.
pub fn authority(endpoint: &Endpoint) -> Result<String, EndpointError> {
    let host = endpoint.host.as_str();
    let bad = host.is_empty()
        || host
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '/' | '[' | ']' | '@'));
    if bad {
        return Err(EndpointError::BadHost {
            host: host.escape_debug().to_string(),
        });
    }
    if endpoint.port == 0 {
        return Err(EndpointError::ZeroPort);
    }
    Ok(if host.contains(':') {
        format!("[{host}]:{}", endpoint.port)
    } else {
        format!("{host}:{}", endpoint.port)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(host: &str, port: u16) -> Endpoint {
        Endpoint {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn formats_names_v4_and_v6() {
        assert_eq!(authority(&ep("lb-1.sim", 6443)), Ok("lb-1.sim:6443".into()));
        assert_eq!(authority(&ep("10.0.0.1", 443)), Ok("10.0.0.1:443".into()));
        assert_eq!(authority(&ep("fd00::1", 6443)), Ok("[fd00::1]:6443".into()));
    }

    #[test]
    fn refuses_what_no_url_carries() {
        for host in ["", "a b", "a/b", "[fd00::1]", "a\nb"] {
            assert!(
                matches!(
                    authority(&ep(host, 6443)),
                    Err(EndpointError::BadHost { .. })
                ),
                "{host:?}"
            );
        }
        assert_eq!(authority(&ep("a", 0)), Err(EndpointError::ZeroPort));
    }
}
