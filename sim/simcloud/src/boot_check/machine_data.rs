//! What a real boot needs from bootstrap data, beyond the check: the files cloud-init would
//! write, the kubeadm config file, the API server's bind port, and the secret values to keep
//! out of messages.

use serde::Deserialize as _;
use serde_yaml_ng::Value;

use super::BootCheckError;
use super::cloud_config::{
    decode_content, kubeadm_command, runcmd_lines, string_at, value_at, written_file,
};

/// The port kubeadm binds the API server to when the config names none.
pub const DEFAULT_BIND_PORT: u16 = 6443;

/// Mode of a `write_files` entry without `permissions`, as cloud-init writes it.
const DEFAULT_MODE: u32 = 0o644;

/// One `write_files` entry, decoded.
#[derive(Clone, PartialEq, Eq)]
pub struct FileToWrite {
    /// The absolute path on the machine, as written in the cloud-config.
    pub path: String,
    /// The decoded content.
    pub content: String,
    /// Its permission bits, e.g. `0o600`.
    pub mode: u32,
}

impl std::fmt::Debug for FileToWrite {
    /// Path and mode only: the content may be a key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileToWrite")
            .field("path", &self.path)
            .field("mode", &format_args!("{:o}", self.mode))
            .finish_non_exhaustive()
    }
}

/// What a real boot reads from cloud-config bootstrap data.
#[derive(Clone)]
pub struct MachineData {
    /// Every `write_files` entry, in order.
    pub files: Vec<FileToWrite>,
    /// The path `kubeadm init|join --config` names.
    pub kubeadm_config: String,
    /// `localAPIEndpoint.bindPort` of the init or control-plane join; 6443 when absent.
    pub api_bind_port: u16,
    /// Bootstrap token values found in the kubeadm documents, well-formed or not, to hide
    /// from any text shown to people (kubeadm quotes a token it refuses).
    pub secrets: Vec<String>,
}

/// Reads `data` as cloud-config running one `kubeadm init|join --config P`.
///
/// # Errors
///
/// The data is not cloud-config, runs no single kubeadm command with `--config`, or has a
/// malformed `write_files` entry.
pub fn machine_data(data: &[u8]) -> Result<MachineData, BootCheckError> {
    let text = std::str::from_utf8(data).map_err(|_| BootCheckError::NotUtf8)?;
    if text.lines().next().map(str::trim_end) != Some("#cloud-config") {
        return Err(BootCheckError::NotCloudConfig);
    }
    let value: Value = serde_yaml_ng::from_str(text).map_err(BootCheckError::InvalidYaml)?;
    let empty = serde_yaml_ng::Mapping::new();
    let cloud_config = match &value {
        Value::Null => &empty,
        other => other.as_mapping().ok_or(BootCheckError::NotAMapping)?,
    };
    let commands = runcmd_lines(cloud_config)?;
    let command = kubeadm_command(&commands)?;
    let kubeadm_config = command
        .config_path
        .clone()
        .ok_or(BootCheckError::NoConfigFlag {
            command: command.verb.name(),
        })?;
    let config_text = written_file(cloud_config, &commands, &kubeadm_config)?.ok_or_else(|| {
        BootCheckError::ConfigFileNotWritten {
            command: command.verb.name(),
            path: kubeadm_config.clone(),
        }
    })?;
    let (api_bind_port, secrets) = read_kubeadm(&config_text);
    Ok(MachineData {
        files: files(cloud_config)?,
        kubeadm_config,
        api_bind_port,
        secrets,
    })
}

fn files(cloud_config: &serde_yaml_ng::Mapping) -> Result<Vec<FileToWrite>, BootCheckError> {
    let Some(entries) = cloud_config.get("write_files") else {
        return Ok(Vec::new());
    };
    let entries = entries.as_sequence().ok_or(BootCheckError::Malformed {
        key: "write_files".into(),
        expected: "a list of {path, content} entries",
    })?;
    let mut files = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let malformed = |field: &str, expected| BootCheckError::Malformed {
            key: format!("write_files[{i}].{field}"),
            expected,
        };
        let path = string_at(entry, &["path"]).ok_or_else(|| malformed("path", "a string"))?;
        let content = match value_at(entry, &["content"]) {
            None | Some(Value::Null) => "",
            Some(Value::String(s)) => s.as_str(),
            Some(_) => return Err(malformed("content", "a string")),
        };
        let mode = match value_at(entry, &["permissions"]) {
            None | Some(Value::Null) => DEFAULT_MODE,
            Some(Value::String(s)) => parse_mode(s)
                .ok_or_else(|| malformed("permissions", "an octal mode such as '0600'"))?,
            Some(_) => return Err(malformed("permissions", "an octal mode such as '0600'")),
        };
        files.push(FileToWrite {
            path: path.to_owned(),
            content: decode_content(path, string_at(entry, &["encoding"]), content)?,
            mode,
        });
    }
    Ok(files)
}

/// `0600`, `600` or `0o600`, at most `07777`.
fn parse_mode(text: &str) -> Option<u32> {
    let digits = text.trim().trim_start_matches("0o");
    u32::from_str_radix(digits, 8).ok().filter(|m| *m <= 0o7777)
}

/// The bind port and the token values of a kubeadm config file's documents. Lenient: a
/// document that does not parse is skipped, as kubeadm itself is the judge of the documents.
fn read_kubeadm(text: &str) -> (u16, Vec<String>) {
    let mut port = None;
    let mut secrets = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let Ok(doc) = Value::deserialize(document) else {
            continue;
        };
        let bind_port = match string_at(&doc, &["kind"]) {
            Some("InitConfiguration") => value_at(&doc, &["localAPIEndpoint", "bindPort"]),
            Some("JoinConfiguration") => {
                value_at(&doc, &["controlPlane", "localAPIEndpoint", "bindPort"])
            }
            _ => None,
        };
        if let Some(p) = bind_port.and_then(Value::as_u64) {
            port = u16::try_from(p).ok().filter(|p| *p != 0);
        }
        if let Some(list) = value_at(&doc, &["bootstrapTokens"]).and_then(Value::as_sequence) {
            secrets.extend(
                list.iter()
                    .filter_map(|t| string_at(t, &["token"]))
                    .map(str::to_owned),
            );
        }
        for path in [
            &["discovery", "bootstrapToken", "token"][..],
            &["discovery", "tlsBootstrapToken"][..],
        ] {
            secrets.extend(string_at(&doc, path).map(str::to_owned));
        }
    }
    secrets.retain(|s| !s.is_empty());
    (port.unwrap_or(DEFAULT_BIND_PORT), secrets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_files_modes_port_and_tokens() {
        let data = "#cloud-config
write_files:
- path: /etc/kubernetes/pki/ca.key
  permissions: '0600'
  content: KEY
- path: /etc/b64
  encoding: b64
  content: aGk=
- path: /run/kubeadm/kubeadm.yaml
  permissions: '0600'
  content: |
    apiVersion: kubeadm.k8s.io/v1beta4
    kind: JoinConfiguration
    discovery:
      bootstrapToken:
        token: abcdef.0123456789abcdef
    controlPlane:
      localAPIEndpoint:
        bindPort: 7443
runcmd:
- kubeadm join --config /run/kubeadm/kubeadm.yaml
";
        let read = machine_data(data.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read.kubeadm_config, "/run/kubeadm/kubeadm.yaml");
        assert_eq!(read.api_bind_port, 7443);
        assert_eq!(read.secrets, vec!["abcdef.0123456789abcdef".to_owned()]);
        let modes: Vec<(&str, u32)> = read
            .files
            .iter()
            .map(|f| (f.path.as_str(), f.mode))
            .collect();
        assert_eq!(
            modes,
            vec![
                ("/etc/kubernetes/pki/ca.key", 0o600),
                ("/etc/b64", 0o644),
                ("/run/kubeadm/kubeadm.yaml", 0o600)
            ]
        );
        assert_eq!(read.files[1].content, "hi");
        assert!(!format!("{:?}", read.files[0]).contains("KEY"));
    }
}
