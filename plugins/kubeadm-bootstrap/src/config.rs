//! The provider's config and the rules its schema cannot say.

use std::net::IpAddr;

use capw_sdk::metadata::FieldError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The algorithm of every key the provider generates: the CAs, the service-account key pair
/// and the admin client key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum KeyAlgorithm {
    /// RSA with a 2048-bit modulus, kubeadm's default. Slow to generate (see the README).
    #[default]
    #[serde(rename = "rsa-2048")]
    Rsa2048,
    /// ECDSA on NIST P-256: fast to generate, small certificates.
    #[serde(rename = "ecdsa-p256")]
    EcdsaP256,
}

impl KeyAlgorithm {
    /// The value of kubeadm v1beta4's `ClusterConfiguration.encryptionAlgorithm`.
    pub fn kubeadm_name(self) -> &'static str {
        match self {
            KeyAlgorithm::Rsa2048 => "RSA-2048",
            KeyAlgorithm::EcdsaP256 => "ECDSA-P256",
        }
    }
}

/// Config of the kubeadm bootstrap provider, e.g. `{"keyAlgorithm": "ecdsa-p256"}`. Every
/// field is optional and `{}` is valid. Besides this schema, the subnets must be CIDRs that do
/// not overlap and `dnsDomain` a DNS name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeadmBootstrapConfig {
    /// Algorithm of the generated keys: `rsa-2048` (default, as kubeadm) or `ecdsa-p256`.
    /// Written into `ClusterConfiguration.encryptionAlgorithm`, so the keys kubeadm creates on
    /// the nodes use it too.
    #[serde(default)]
    pub key_algorithm: KeyAlgorithm,
    /// CIDR of the pods (`ClusterConfiguration.networking.podSubnet`).
    #[serde(default = "default_pod_subnet")]
    pub pod_subnet: String,
    /// CIDR of the services (`ClusterConfiguration.networking.serviceSubnet`).
    #[serde(default = "default_service_subnet")]
    pub service_subnet: String,
    /// DNS domain of the services (`ClusterConfiguration.networking.dnsDomain`).
    #[serde(default = "default_dns_domain")]
    pub dns_domain: String,
    /// Port each control-plane node's API server listens on (`localAPIEndpoint.bindPort`);
    /// the cluster endpoint's port may differ when a load balancer is in front.
    #[serde(default = "default_api_server_bind_port")]
    #[schemars(range(min = 1))]
    pub api_server_bind_port: u16,
    /// Lifetime of the bootstrap token, in hours (`bootstrapTokens[0].ttl`), and of each token
    /// renewed for later joins (the host renews one when it is missing from the workload
    /// cluster or past half this lifetime).
    #[serde(default = "default_bootstrap_token_ttl_hours")]
    #[schemars(range(min = 1, max = 8760))]
    pub bootstrap_token_ttl_hours: u32,
}

fn default_pod_subnet() -> String {
    "192.168.0.0/16".into()
}

fn default_service_subnet() -> String {
    "10.96.0.0/12".into()
}

fn default_dns_domain() -> String {
    "cluster.local".into()
}

fn default_api_server_bind_port() -> u16 {
    6443
}

fn default_bootstrap_token_ttl_hours() -> u32 {
    24
}

impl Default for KubeadmBootstrapConfig {
    /// What `{}` parses into.
    fn default() -> Self {
        Self {
            key_algorithm: KeyAlgorithm::default(),
            pod_subnet: default_pod_subnet(),
            service_subnet: default_service_subnet(),
            dns_domain: default_dns_domain(),
            api_server_bind_port: default_api_server_bind_port(),
            bootstrap_token_ttl_hours: default_bootstrap_token_ttl_hours(),
        }
    }
}

/// The largest token lifetime accepted: a year.
const MAX_TOKEN_TTL_HOURS: u32 = 8760;

impl KubeadmBootstrapConfig {
    /// Every rule violation, each at its field's JSON Pointer.
    ///
    /// # Guarantees
    ///
    /// `Ok` means both subnets are CIDRs (`address/prefix`, IPv4 or IPv6, no host bits set)
    /// of the same family that do not overlap, `dnsDomain` is a lowercase DNS name,
    /// `apiServerBindPort` is not 0 and `bootstrapTokenTtlHours` is 1 to 8760.
    ///
    /// # Errors
    ///
    /// One [`FieldError`] per problem: `/podSubnet`, `/serviceSubnet` (also for an overlap or
    /// a family mismatch), `/dnsDomain`, `/apiServerBindPort`, `/bootstrapTokenTtlHours`.
    pub fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        let pods = Cidr::parse(&self.pod_subnet)
            .map_err(|why| errors.push(FieldError::new("/podSubnet", why)))
            .ok();
        let services = Cidr::parse(&self.service_subnet)
            .map_err(|why| errors.push(FieldError::new("/serviceSubnet", why)))
            .ok();
        if let (Some(pods), Some(services)) = (pods, services) {
            if pods.is_ipv4() != services.is_ipv4() {
                errors.push(FieldError::new(
                    "/serviceSubnet",
                    "must be of the same IP family as podSubnet",
                ));
            } else if pods.overlaps(&services) {
                errors.push(FieldError::new(
                    "/serviceSubnet",
                    format!(
                        "{} overlaps podSubnet {}: services and pods need separate ranges",
                        self.service_subnet, self.pod_subnet
                    ),
                ));
            }
        }
        if let Err(why) = check_dns_name(&self.dns_domain) {
            errors.push(FieldError::new("/dnsDomain", why));
        }
        if self.api_server_bind_port == 0 {
            errors.push(FieldError::new("/apiServerBindPort", "must not be 0"));
        }
        if !(1..=MAX_TOKEN_TTL_HOURS).contains(&self.bootstrap_token_ttl_hours) {
            errors.push(FieldError::new(
                "/bootstrapTokenTtlHours",
                format!(
                    "must be 1 to {MAX_TOKEN_TTL_HOURS}; got {}",
                    self.bootstrap_token_ttl_hours
                ),
            ));
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// An IP range, `address/prefix`.
#[derive(Debug, Clone, Copy)]
struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    fn parse(text: &str) -> Result<Self, String> {
        let (address, prefix) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not a CIDR: expected address/prefix"))?;
        let network: IpAddr = address
            .parse()
            .map_err(|_| format!("`{address}` is not an IP address"))?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix: u8 = prefix
            .parse()
            .ok()
            .filter(|p| *p <= max)
            .ok_or_else(|| format!("`{prefix}` is not a prefix length of 0 to {max}"))?;
        let cidr = Self { network, prefix };
        if cidr.bits() & !cidr.mask() != 0 {
            return Err(format!(
                "`{text}` has host bits set after the /{prefix} prefix"
            ));
        }
        Ok(cidr)
    }

    fn is_ipv4(&self) -> bool {
        self.network.is_ipv4()
    }

    /// The address as the low bits of a u128, so both families share the arithmetic.
    fn bits(&self) -> u128 {
        match self.network {
            IpAddr::V4(a) => u128::from(u32::from(a)),
            IpAddr::V6(a) => u128::from(a),
        }
    }

    fn width(&self) -> u32 {
        if self.is_ipv4() { 32 } else { 128 }
    }

    fn mask(&self) -> u128 {
        let host_bits = self.width() - u32::from(self.prefix);
        let all = if self.is_ipv4() {
            u128::from(u32::MAX)
        } else {
            u128::MAX
        };
        all.checked_shl(host_bits).unwrap_or(0) & all
    }

    /// Two ranges of one family overlap when one contains the other's network address.
    fn overlaps(&self, other: &Cidr) -> bool {
        let mask = self.mask() & other.mask();
        self.bits() & mask == other.bits() & mask
    }
}

/// A lowercase DNS name (RFC 1123 labels, at most 253 characters).
fn check_dns_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 253 {
        return Err("must be a DNS name of 1 to 253 characters".into());
    }
    for label in name.split('.') {
        let valid = !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !valid {
            return Err(format!(
                "`{name}` is not a DNS name: each dot-separated label must be 1 to 63 lowercase \
                 letters, digits or inner hyphens"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{assert_accepted, assert_field_error, assert_refused_at, config};

    use super::*;
    use crate::KubeadmBootstrap;

    #[test]
    fn empty_config_takes_the_defaults() {
        let parsed: KubeadmBootstrapConfig = config("{}");
        assert_eq!(parsed, KubeadmBootstrapConfig::default());
        assert_eq!(parsed.key_algorithm, KeyAlgorithm::Rsa2048);
        assert_eq!(parsed.key_algorithm.kubeadm_name(), "RSA-2048");
        assert_eq!(parsed.service_subnet, "10.96.0.0/12");
        assert_eq!(parsed.api_server_bind_port, 6443);
        assert_accepted::<KubeadmBootstrap>("{}");
    }

    #[test]
    fn accepts_both_algorithms_and_ipv6() {
        for json in [
            r#"{"keyAlgorithm": "rsa-2048"}"#,
            r#"{"keyAlgorithm": "ecdsa-p256"}"#,
            r#"{"podSubnet": "fd00:10::/56", "serviceSubnet": "fd00:20::/108"}"#,
            r#"{"dnsDomain": "k8s.example-1.internal", "bootstrapTokenTtlHours": 8760}"#,
        ] {
            assert_accepted::<KubeadmBootstrap>(json);
        }
        let parsed: KubeadmBootstrapConfig = config(r#"{"keyAlgorithm": "ecdsa-p256"}"#);
        assert_eq!(parsed.key_algorithm.kubeadm_name(), "ECDSA-P256");
    }

    #[test]
    fn bad_subnets_are_refused_at_their_paths() {
        assert_refused_at::<KubeadmBootstrap>(r#"{"podSubnet": "10.0.0.0"}"#, &["/podSubnet"]);
        assert_refused_at::<KubeadmBootstrap>(r#"{"podSubnet": "10.0.0.300/8"}"#, &["/podSubnet"]);
        assert_refused_at::<KubeadmBootstrap>(
            r#"{"serviceSubnet": "10.96.0.0/33"}"#,
            &["/serviceSubnet"],
        );
        let errors = assert_refused_at::<KubeadmBootstrap>(
            r#"{"podSubnet": "10.1.0.0/8"}"#,
            &["/podSubnet"],
        );
        assert_field_error(&errors, "/podSubnet", "host bits");
    }

    #[test]
    fn overlapping_or_mixed_subnets_are_refused() {
        let errors = assert_refused_at::<KubeadmBootstrap>(
            r#"{"podSubnet": "10.0.0.0/8"}"#,
            &["/serviceSubnet"],
        );
        assert_field_error(&errors, "/serviceSubnet", "overlaps");
        let errors = assert_refused_at::<KubeadmBootstrap>(
            r#"{"podSubnet": "fd00::/64"}"#,
            &["/serviceSubnet"],
        );
        assert_field_error(&errors, "/serviceSubnet", "family");
    }

    #[test]
    fn reports_every_problem() {
        assert_refused_at::<KubeadmBootstrap>(
            r#"{"podSubnet": "x", "serviceSubnet": "y", "dnsDomain": "Bad_Domain",
                "apiServerBindPort": 0, "bootstrapTokenTtlHours": 0}"#,
            &[
                "/podSubnet",
                "/serviceSubnet",
                "/dnsDomain",
                "/apiServerBindPort",
                "/bootstrapTokenTtlHours",
            ],
        );
    }

    #[test]
    fn type_errors_and_unknown_fields_are_refused() {
        assert_refused_at::<KubeadmBootstrap>(
            r#"{"keyAlgorithm": "rsa-4096"}"#,
            &["/keyAlgorithm"],
        );
        assert_refused_at::<KubeadmBootstrap>(
            r#"{"apiServerBindPort": 70000}"#,
            &["/apiServerBindPort"],
        );
        assert_refused_at::<KubeadmBootstrap>(r#"{"dnsDomain": 5}"#, &["/dnsDomain"]);
        assert_refused_at::<KubeadmBootstrap>(r#"{"keyAlgo": "rsa-2048"}"#, &["/keyAlgo"]);
    }

    #[test]
    fn dns_names() {
        assert!(check_dns_name("cluster.local").is_ok());
        assert!(check_dns_name("a").is_ok());
        assert!(check_dns_name("").is_err());
        assert!(check_dns_name("a..b").is_err());
        assert!(check_dns_name("-a.b").is_err());
        assert!(check_dns_name(&"a".repeat(64)).is_err());
    }
}
