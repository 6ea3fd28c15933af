//! Errors of topology computation: every problem found, each with the path of its culprit.

use std::fmt;

/// The object a [`TopologyError`] path points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Subject {
    /// The `Cluster` (its topology or variable values).
    Cluster,
    /// The `ClusterClass` (its variables, patches or provider configs).
    ClusterClass,
    /// A `WasmProvider` (its published config schema).
    WasmProvider,
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cluster => "Cluster",
            Self::ClusterClass => "ClusterClass",
            Self::WasmProvider => "WasmProvider",
        })
    }
}

/// What kind of problem a [`TopologyError`] reports, for programs that react to some.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TopologyErrorKind {
    /// `spec.topology.classRef` does not name the ClusterClass given.
    ClassMismatch,
    /// `spec.topology.version` is not `vMAJOR.MINOR.PATCH`.
    InvalidVersion,
    /// A replica count is negative or beyond the limit.
    InvalidReplicas,
    /// A pool name is not a DNS label, or used twice.
    InvalidPoolName,
    /// A pool names a worker class the ClusterClass does not have.
    UnknownWorkerClass,
    /// A variable declaration is malformed (bad schema, reserved or duplicate name).
    InvalidVariableDeclaration,
    /// A value is given for a variable the class does not declare, or twice.
    UnknownVariable,
    /// A required variable has no value.
    MissingVariable,
    /// A variable value does not match its schema.
    InvalidVariableValue,
    /// A patch is malformed (bad selector, missing or double value, unknown variable).
    InvalidPatch,
    /// A patch operation could not be applied to its config.
    PatchFailed,
    /// A resulting provider config does not match the provider's schema.
    InvalidConfig,
    /// A pool's `rollout` bound is neither a count nor a percentage.
    InvalidRollout,
    /// A pool's `healthCheck` has a negative time, an empty condition type or a bad trigger.
    InvalidHealthCheck,
}

/// One problem, with the path of the field at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{subject} {path}: {message}")]
pub struct TopologyError {
    /// Which object `path` points into.
    pub subject: Subject,
    /// What kind of problem.
    pub kind: TopologyErrorKind,
    /// Dotted path, for example `spec.topology.variables[1].value.cidr`.
    pub path: String,
    /// What is wrong, for people.
    pub message: String,
}

impl TopologyError {
    pub(crate) fn new(
        subject: Subject,
        kind: TopologyErrorKind,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            subject,
            kind,
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Every problem found in one computation (never empty), in the order found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct TopologyErrors(pub Vec<TopologyError>);

impl TopologyErrors {
    /// The errors.
    pub fn errors(&self) -> &[TopologyError] {
        &self.0
    }
}

impl fmt::Display for TopologyErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} topology error(s)", self.0.len())?;
        for error in &self.0 {
            write!(f, "\n- {error}")?;
        }
        Ok(())
    }
}

/// Collects errors, dropping exact repeats (a class problem met once per pool is one problem).
#[derive(Default)]
pub(crate) struct Errors(Vec<TopologyError>);

impl Errors {
    /// How many errors so far.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Prefixes the message of every error found since there were `since`.
    pub(crate) fn prefix_since(&mut self, since: usize, prefix: &str) {
        for e in &mut self.0[since..] {
            e.message = format!("{prefix}{}", e.message);
        }
    }

    pub(crate) fn push(&mut self, error: TopologyError) {
        if !self.0.contains(&error) {
            self.0.push(error);
        }
    }

    pub(crate) fn add(
        &mut self,
        subject: Subject,
        kind: TopologyErrorKind,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.push(TopologyError::new(subject, kind, path, message));
    }

    pub(crate) fn cluster(
        &mut self,
        kind: TopologyErrorKind,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.push(TopologyError::new(Subject::Cluster, kind, path, message));
    }

    pub(crate) fn class(
        &mut self,
        kind: TopologyErrorKind,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.push(TopologyError::new(
            Subject::ClusterClass,
            kind,
            path,
            message,
        ));
    }

    pub(crate) fn into_result<T>(self, value: T) -> Result<T, TopologyErrors> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(TopologyErrors(self.0))
        }
    }
}
