//! Turning JSON pointers into the dotted field paths users see in errors.

use serde_json::Value;

/// `base` followed by the field `pointer` points at inside `root`, in dotted form.
///
/// Array indexes become `[n]`, plain keys `.key`, other keys `["key"]`. Segments past the end
/// of `root` (for a missing field) are rendered as keys.
pub(crate) fn join_pointer(base: &str, root: &Value, pointer: &str) -> String {
    let mut out = base.to_owned();
    let mut current = Some(root);
    for raw in pointer.split('/').skip(1) {
        let segment = raw.replace("~1", "/").replace("~0", "~");
        match current {
            Some(Value::Array(items)) => {
                out.push_str(&format!("[{segment}]"));
                current = segment.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            other => {
                if is_plain(&segment) {
                    out.push('.');
                    out.push_str(&segment);
                } else {
                    out.push_str(&format!("[{segment:?}]"));
                }
                current = other.and_then(|v| v.get(&segment));
            }
        }
    }
    out
}

fn is_plain(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `base[index]`.
pub(crate) fn at(base: &str, index: usize) -> String {
    format!("{base}[{index}]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_keys_indexes_and_odd_keys() {
        let root = json!({"a": [{"b.c": 1}], "n": {"0": 2}});
        assert_eq!(join_pointer("v", &root, "/a/0/b.c"), r#"v.a[0]["b.c"]"#);
        assert_eq!(join_pointer("v", &root, "/n/0"), "v.n.0");
        assert_eq!(join_pointer("v", &root, ""), "v");
        assert_eq!(join_pointer("v", &root, "/x~1y/z"), r#"v["x/y"].z"#);
    }
}
