//! Error types: [`LoadError`] for refused programs, [`ControlError`] for
//! refused control-plane operations.

use std::fmt;

/// A BMv2 JSON program was refused. `path` locates the offending item in the
/// JSON document (e.g. `pipelines[0].tables[3].key[1]`), `msg` says what is
/// wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    /// Location in the JSON document; empty for the document itself.
    pub path: String,
    /// What is wrong.
    pub msg: String,
}

impl LoadError {
    pub(crate) fn new(path: impl Into<String>, msg: impl Into<String>) -> Self {
        LoadError {
            path: path.into(),
            msg: msg.into(),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.msg)
        } else {
            write!(f, "{}: {}", self.path, self.msg)
        }
    }
}

impl std::error::Error for LoadError {}

/// A control-plane operation was refused; the switch state is unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ControlError {
    /// No object of that kind has that name (kind, name).
    NotFound(&'static str, String),
    /// No entry / member with that handle in that table.
    BadHandle(String, u32),
    /// An index is outside an array (object name, index, size).
    OutOfRange(String, u64, u64),
    /// The argument does not fit the object (e.g. wrong key length, wrong
    /// number of action parameters, value wider than the field).
    InvalidArgument(String),
    /// The entry's match key is already in the table.
    Duplicate(String),
    /// The table holds const entries or a const default action.
    Immutable(String),
    /// The table is full (its `max_size`).
    Full(String),
}

impl fmt::Display for ControlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ControlError::NotFound(kind, name) => write!(f, "no {kind} named {name:?}"),
            ControlError::BadHandle(t, h) => write!(f, "{t}: no entry with handle {h}"),
            ControlError::OutOfRange(n, i, s) => {
                write!(f, "{n}: index {i} out of range (size {s})")
            }
            ControlError::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            ControlError::Duplicate(m) => write!(f, "duplicate entry: {m}"),
            ControlError::Immutable(m) => write!(f, "immutable: {m}"),
            ControlError::Full(t) => write!(f, "{t}: table full"),
        }
    }
}

impl std::error::Error for ControlError {}
