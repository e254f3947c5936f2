//! Where a trace server listens: an abstract UNIX socket name or a filesystem path.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// The name a trace server listens on and clients connect to.
///
/// Written as text, a leading `@` means an abstract name (Linux only; no file, gone when the server closes it),
/// anything else a filesystem path: `@lizard-trace` or `/tmp/trace.sock`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SocketName {
    /// An abstract name, without the leading NUL the kernel uses to mark it.
    Abstract(Vec<u8>),
    /// A socket file at this path.
    Path(PathBuf),
}

/// The longest name `sun_path` can hold: 108 bytes minus the leading NUL of an abstract name or the trailing
/// NUL of a path.
pub const MAX_SOCKET_NAME_LEN: usize = 107;

/// The default server name, `@lizard-trace`.
pub const DEFAULT_SOCKET_NAME: &str = "@lizard-trace";

impl SocketName {
    /// An abstract name.
    pub fn abstract_name(name: impl Into<Vec<u8>>) -> Self {
        SocketName::Abstract(name.into())
    }

    /// A socket file path.
    pub fn path(path: impl Into<PathBuf>) -> Self {
        SocketName::Path(path.into())
    }

    /// The name's length in bytes (without any NUL).
    pub fn len(&self) -> usize {
        match self {
            SocketName::Abstract(bytes) => bytes.len(),
            SocketName::Path(path) => path.as_os_str().len(),
        }
    }

    /// Whether the name is empty (never valid).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Default for SocketName {
    fn default() -> Self {
        SocketName::Abstract(DEFAULT_SOCKET_NAME.as_bytes()[1..].to_vec())
    }
}

impl FromStr for SocketName {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.strip_prefix('@') {
            Some(name) => SocketName::Abstract(name.as_bytes().to_vec()),
            None => SocketName::Path(PathBuf::from(s)),
        })
    }
}

impl fmt::Display for SocketName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SocketName::Abstract(bytes) => write!(f, "@{}", String::from_utf8_lossy(bytes)),
            SocketName::Path(path) => write!(f, "{}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_sign_means_abstract() {
        let name: SocketName = "@lizard-trace".parse().unwrap();
        assert_eq!(name, SocketName::Abstract(b"lizard-trace".to_vec()));
        assert_eq!(name, SocketName::default());
        assert_eq!(name.to_string(), "@lizard-trace");
        assert_eq!(name.len(), 12);
    }

    #[test]
    fn other_text_is_a_path() {
        let name: SocketName = "/tmp/t.sock".parse().unwrap();
        assert_eq!(name, SocketName::path("/tmp/t.sock"));
        assert_eq!(name.to_string(), "/tmp/t.sock");
        assert!(!name.is_empty());
    }
}
