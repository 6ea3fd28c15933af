//! Where an object lives ([`ObjectKey`]): the one type every other part of the store names,
//! so it depends on none of them.

use std::fmt;

/// Where an object lives: its kind, namespace (empty for cluster-scoped kinds) and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The object's `kind`, e.g. `Cluster`.
    pub kind: String,
    /// Its namespace; empty for a cluster-scoped kind.
    pub namespace: String,
    /// Its `metadata.name`.
    pub name: String,
}

impl ObjectKey {
    /// A key for a namespaced object.
    pub fn namespaced(kind: &str, namespace: &str, name: &str) -> Self {
        ObjectKey {
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// A key for a cluster-scoped object.
    pub fn cluster_scoped(kind: &str, name: &str) -> Self {
        Self::namespaced(kind, "", name)
    }

    /// The database key: `kind/namespace/name`, which sorts objects of a kind together and
    /// namespaces within it.
    pub fn db_key(&self) -> String {
        format!("{}/{}/{}", self.kind, self.namespace, self.name)
    }

    /// The prefix of every database key of `kind` (in `namespace`, when given).
    pub fn prefix(kind: &str, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) => format!("{kind}/{ns}/"),
            None => format!("{kind}/"),
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{} {}", self.kind, self.name)
        } else {
            write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}
