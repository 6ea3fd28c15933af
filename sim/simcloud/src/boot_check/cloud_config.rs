//! Reading cloud-config: the kubeadm command in `runcmd`, the files it writes, and the
//! kubeadm documents in them.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize as _;
use serde_yaml_ng::{Mapping, Value};

use super::{BootCheckError, KUBEADM_API_VERSION};

/// Every `runcmd` entry as one shell text: argv lists joined with spaces.
pub(super) fn runcmd_lines(cloud_config: &Mapping) -> Result<Vec<String>, BootCheckError> {
    let Some(runcmd) = cloud_config.get("runcmd") else {
        return Ok(Vec::new());
    };
    let malformed = |key: String| BootCheckError::Malformed {
        key,
        expected: "a list of strings or of argv lists",
    };
    let entries = runcmd
        .as_sequence()
        .ok_or_else(|| malformed("runcmd".into()))?;
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| match entry {
            Value::String(s) => Ok(s.clone()),
            Value::Sequence(argv) => argv
                .iter()
                .map(scalar_text)
                .collect::<Option<Vec<_>>>()
                .map(|words| words.join(" "))
                .ok_or_else(|| malformed(format!("runcmd[{i}]"))),
            _ => Err(malformed(format!("runcmd[{i}]"))),
        })
        .collect()
}

fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verb {
    Init,
    Join,
}

impl Verb {
    pub(super) fn name(self) -> &'static str {
        match self {
            Verb::Init => "init",
            Verb::Join => "join",
        }
    }
}

pub(super) struct KubeadmCommand {
    pub(super) verb: Verb,
    pub(super) config_path: Option<String>,
}

/// The single `kubeadm init|join` among the commands, with its `--config` path.
pub(super) fn kubeadm_command(commands: &[String]) -> Result<KubeadmCommand, BootCheckError> {
    let mut found = Vec::new();
    for command in commands {
        let words: Vec<&str> = command.split_whitespace().collect();
        for (i, word) in words.iter().enumerate() {
            if word.rsplit('/').next() != Some("kubeadm") {
                continue;
            }
            let verb = match words.get(i + 1) {
                Some(&"init") => Verb::Init,
                Some(&"join") => Verb::Join,
                _ => continue,
            };
            // The flags of this invocation end at the next shell separator.
            let flags = words[i + 2..]
                .iter()
                .take_while(|w| !matches!(**w, "&&" | "||" | ";" | "|"));
            found.push(KubeadmCommand {
                verb,
                config_path: config_flag(flags),
            });
        }
    }
    match found.len() {
        0 => Err(BootCheckError::NoKubeadmCommand),
        1 => Ok(found.remove(0)),
        count => Err(BootCheckError::SeveralKubeadmCommands {
            count,
            first: found[0].verb.name(),
            second: found[1].verb.name(),
        }),
    }
}

fn config_flag<'a>(mut flags: impl Iterator<Item = &'a &'a str>) -> Option<String> {
    while let Some(flag) = flags.next() {
        if let Some(path) = flag.strip_prefix("--config=") {
            return Some(unquote(path).to_owned());
        }
        if *flag == "--config" {
            return flags.next().map(|p| unquote(p).to_owned());
        }
    }
    None
}

fn unquote(word: &str) -> &str {
    word.trim_matches(|c| c == '"' || c == '\'')
}

/// The text written to `path`: by a `write_files` entry, else by a heredoc in `runcmd`.
pub(super) fn written_file(
    cloud_config: &Mapping,
    commands: &[String],
    path: &str,
) -> Result<Option<String>, BootCheckError> {
    if let Some(files) = cloud_config.get("write_files") {
        let files = files.as_sequence().ok_or(BootCheckError::Malformed {
            key: "write_files".into(),
            expected: "a list of {path, content} entries",
        })?;
        for (i, file) in files.iter().enumerate() {
            let Some(file_path) = string_at(file, &["path"]) else {
                return Err(BootCheckError::Malformed {
                    key: format!("write_files[{i}].path"),
                    expected: "a string",
                });
            };
            if file_path != path {
                continue;
            }
            let content = match value_at(file, &["content"]) {
                None | Some(Value::Null) => "",
                Some(Value::String(s)) => s.as_str(),
                Some(_) => {
                    return Err(BootCheckError::Malformed {
                        key: format!("write_files[{i}].content"),
                        expected: "a string",
                    });
                }
            };
            return decode_content(path, string_at(file, &["encoding"]), content).map(Some);
        }
    }
    Ok(commands
        .iter()
        .flat_map(|c| heredocs(c))
        .find(|h| h.target.as_deref() == Some(path))
        .map(|h| h.body))
}

pub(super) fn decode_content(
    path: &str,
    encoding: Option<&str>,
    content: &str,
) -> Result<String, BootCheckError> {
    match encoding.map(str::to_ascii_lowercase).as_deref() {
        None | Some("text/plain") => Ok(content.to_owned()),
        Some("b64" | "base64") => {
            let compact: String = content.split_whitespace().collect();
            BASE64
                .decode(compact)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or_else(|| BootCheckError::BadEncodedContent {
                    path: path.to_owned(),
                })
        }
        Some(other) => Err(BootCheckError::UnsupportedEncoding {
            path: path.to_owned(),
            encoding: other.to_owned(),
        }),
    }
}

/// A heredoc in a shell text: its body and the file it is redirected to, if any.
#[derive(Debug, PartialEq, Eq)]
struct Heredoc {
    target: Option<String>,
    body: String,
}

/// Heredocs of the forms `cat <<EOF > P`, `cat > P <<'EOF'`, `tee P <<-EOF`.
fn heredocs(script: &str) -> Vec<Heredoc> {
    let mut found = Vec::new();
    let mut lines = script.lines();
    while let Some(line) = lines.next() {
        let Some(at) = line.find("<<") else {
            continue;
        };
        let marker = line[at + 2..]
            .trim_start_matches('-')
            .split_whitespace()
            .next()
            .map(unquote)
            .unwrap_or_default();
        if marker.is_empty() {
            continue;
        }
        let mut body = String::new();
        for body_line in lines.by_ref() {
            if body_line.trim() == marker {
                break;
            }
            body.push_str(body_line);
            body.push('\n');
        }
        found.push(Heredoc {
            target: redirect_target(line),
            body,
        });
    }
    found
}

fn redirect_target(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    for (i, word) in words.iter().enumerate() {
        if *word == ">" || *word == "tee" {
            return words.get(i + 1).map(|p| unquote(p).to_owned());
        }
        if let Some(path) = word
            .strip_prefix('>')
            .filter(|p| !p.is_empty() && *p != ">")
        {
            return Some(unquote(path).to_owned());
        }
    }
    None
}

/// The kubeadm documents of a config file, by kind.
pub(super) struct KubeadmDocuments {
    documents: Vec<(String, Value)>,
}

impl KubeadmDocuments {
    pub(super) fn get(&self, path: &str, kind: &'static str) -> Result<&Value, BootCheckError> {
        self.documents
            .iter()
            .find(|(k, _)| k == kind)
            .map(|(_, v)| v)
            .ok_or_else(|| BootCheckError::MissingDocument {
                path: path.to_owned(),
                kind,
            })
    }
}

/// The `kubeadm.k8s.io` documents of `text`; any of another version is an error.
pub(super) fn kubeadm_documents(
    path: &str,
    text: &str,
) -> Result<KubeadmDocuments, BootCheckError> {
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let value =
            Value::deserialize(document).map_err(|source| BootCheckError::InvalidConfigYaml {
                path: path.to_owned(),
                source,
            })?;
        let (Some(api_version), Some(kind)) = (
            string_at(&value, &["apiVersion"]),
            string_at(&value, &["kind"]),
        ) else {
            continue;
        };
        if !api_version.starts_with("kubeadm.k8s.io/") {
            continue;
        }
        if api_version != KUBEADM_API_VERSION {
            return Err(BootCheckError::WrongApiVersion {
                path: path.to_owned(),
                kind: kind.to_owned(),
                found: api_version.to_owned(),
            });
        }
        documents.push((kind.to_owned(), value));
    }
    Ok(KubeadmDocuments { documents })
}

pub(super) fn value_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(*key))
}

pub(super) fn string_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    value_at(value, path).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heredoc_targets() {
        assert_eq!(redirect_target("cat <<EOF > /a"), Some("/a".into()));
        assert_eq!(redirect_target("cat >/a <<EOF"), Some("/a".into()));
        assert_eq!(redirect_target("tee '/a' <<-EOF"), Some("/a".into()));
        assert_eq!(redirect_target("cat <<EOF"), None);
        let docs = heredocs("cat <<'EOF' > /a\nx: 1\n  EOF\necho done\n");
        assert_eq!(
            docs,
            vec![Heredoc {
                target: Some("/a".into()),
                body: "x: 1\n".into()
            }]
        );
    }
}
