//! Text capw shows people, shared by the host's crates, simcloud and guest components: it
//! has no dependencies.

use std::error::Error;

/// `err` and its sources on one line, `a: b: c`, for messages, conditions and logs. A source
/// whose text the line already holds (an error that prints its source in its own message) is
/// not repeated.
///
/// ```
/// let io = std::io::Error::other("disk full");
/// let err = std::io::Error::new(std::io::ErrorKind::Other, Wrapped(io));
/// assert_eq!(capw_text::error_chain(&err), "writing the state: disk full");
///
/// #[derive(Debug)]
/// struct Wrapped(std::io::Error);
/// impl std::fmt::Display for Wrapped {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("writing the state")
///     }
/// }
/// impl std::error::Error for Wrapped {
///     fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
///         Some(&self.0)
///     }
/// }
/// ```
pub fn error_chain(err: &dyn Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = cause.source();
    }
    out
}

/// `text` cut to at most `max` bytes at a character boundary, with `…` after the cut when
/// anything was cut: for messages that must stay bounded (a log line, a condition, a report).
///
/// ```
/// assert_eq!(capw_text::truncate("short".into(), 16), "short");
/// assert_eq!(capw_text::truncate("größer".into(), 3), "gr…");
/// ```
pub fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl Error for Layer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.1.as_deref().map(|l| l as &(dyn Error + 'static))
        }
    }

    #[test]
    fn sources_follow_in_order_and_repeats_are_left_out() {
        let inner = Layer("refused", None);
        let middle = Layer("connecting: refused", Some(Box::new(inner)));
        let outer = Layer("loading provider a", Some(Box::new(middle)));
        assert_eq!(
            error_chain(&outer),
            "loading provider a: connecting: refused"
        );
        assert_eq!(error_chain(&Layer("alone", None)), "alone");
    }
}
