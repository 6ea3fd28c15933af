//! Keeping secrets out of the reasons people read: kubeadm quotes a token it refuses, and a
//! machine's log may carry one.

/// The replacement of a hidden secret.
const HIDDEN: &str = "<redacted>";

/// `text` with every string of `secrets` and every substring shaped like a bootstrap token
/// (`[a-z0-9]{6}.[a-z0-9]{16}`) replaced by `<redacted>`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        out = out.replace(secret.as_str(), HIDDEN);
    }
    hide_token_shapes(&out)
}

fn hide_token_shapes(text: &str) -> String {
    let bytes = text.as_bytes();
    let token_char = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i + 23 <= bytes.len() {
        let candidate = &bytes[i..i + 23];
        let starts_word = i == 0 || !token_char(bytes[i - 1]);
        let ends_word = bytes.get(i + 23).is_none_or(|b| !token_char(*b));
        if starts_word
            && ends_word
            && candidate[6] == b'.'
            && candidate[..6].iter().all(|b| token_char(*b))
            && candidate[7..].iter().all(|b| token_char(*b))
        {
            out.push_str(&text[copied..i]);
            out.push_str(HIDDEN);
            i += 23;
            copied = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_named_secrets_are_hidden() {
        assert_eq!(
            redact("token abcdef.0123456789abcdef used", &[]),
            "token <redacted> used"
        );
        assert_eq!(redact("x=s3cret!", &["s3cret!".into()]), "x=<redacted>");
        assert_eq!(redact("v1.35.4 ok", &[]), "v1.35.4 ok");
    }
}
