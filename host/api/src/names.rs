//! The names Kubernetes gives objects, checked the way its API server checks them, so that
//! the local mode stores nothing a cluster would refuse.
//!
//! - An object's name is a lowercase RFC 1123 subdomain: at most 253 characters of
//!   lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit.
//! - A namespace is a lowercase RFC 1123 label: the same without `.`, at most 63 characters.
//! - A Cluster's name is also a label value on every object made for it (its Machines and
//!   their instances), so, as in Cluster API, it is at most 63 characters.

/// Longest name of an object ([`subdomain_problem`]).
pub const MAX_NAME: usize = 253;

/// Longest namespace, and longest Cluster name ([`label_problem`]).
pub const MAX_LABEL: usize = 63;

/// Why `name` is not a lowercase RFC 1123 subdomain of at most `max` characters, or `None`
/// when it is one.
pub fn subdomain_problem(name: &str, max: usize) -> Option<String> {
    problem(name, max, true)
}

/// Why `name` is not a lowercase RFC 1123 label (at most 63 characters), or `None` when it
/// is one.
pub fn label_problem(name: &str) -> Option<String> {
    problem(name, MAX_LABEL, false)
}

fn problem(name: &str, max: usize, dots: bool) -> Option<String> {
    let what = if dots {
        "a lowercase RFC 1123 subdomain"
    } else {
        "a lowercase RFC 1123 label"
    };
    let allowed = if dots {
        "lowercase letters, digits, '-' and '.'"
    } else {
        "lowercase letters, digits and '-'"
    };
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    if name.is_empty() {
        return Some(format!("is empty: it must be {what}"));
    }
    let length = name.chars().count();
    if length > max {
        return Some(format!("is {length} characters long, at most {max}"));
    }
    if let Some(c) = name
        .chars()
        .find(|&c| !(alnum(c) || c == '-' || (dots && c == '.')))
    {
        return Some(format!("holds {c:?}: {what} holds only {allowed}"));
    }
    if !name.starts_with(alnum) || !name.ends_with(alnum) {
        return Some(format!(
            "must start and end with a lowercase letter or digit ({what})"
        ));
    }
    if dots
        && name
            .split('.')
            .any(|part| !part.starts_with(alnum) || !part.ends_with(alnum))
    {
        return Some(format!(
            "has a part between dots that does not start and end with a lowercase letter or \
             digit ({what})"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_kubernetes_takes_pass() {
        for name in ["a", "alpha", "md-0", "a.b-c.d", "0abc", &"x".repeat(253)] {
            assert_eq!(subdomain_problem(name, MAX_NAME), None, "{name}");
        }
        for name in ["default", "capw-system", &"n".repeat(63)] {
            assert_eq!(label_problem(name), None, "{name}");
        }
    }

    #[test]
    fn each_refusal_says_what_is_wrong() {
        let cases = [
            ("Gamma Cluster_1!", "holds 'G'"),
            ("gamma cluster", "holds ' '"),
            ("gamma_1", "holds '_'"),
            ("-alpha", "must start and end"),
            ("alpha-", "must start and end"),
            ("a..b", "part between dots"),
            ("a.-b", "part between dots"),
            ("", "is empty"),
            ("ä", "holds 'ä'"),
            ("a\u{1b}[2J", "holds '\\u{1b}'"),
        ];
        for (name, says) in cases {
            let problem = subdomain_problem(name, MAX_NAME).unwrap_or_default();
            assert!(problem.contains(says), "{name:?}: {problem}");
        }
        assert_eq!(
            subdomain_problem(&"x".repeat(254), MAX_NAME).as_deref(),
            Some("is 254 characters long, at most 253")
        );
        assert_eq!(
            label_problem(&"x".repeat(64)).as_deref(),
            Some("is 64 characters long, at most 63")
        );
        assert!(label_problem("a.b").unwrap().contains("holds '.'"));
    }
}
