//! How often a server writes a file-backed ring back to its file: what survives a power cut.

use std::fmt;
use std::num::NonZeroU64;
use std::str::FromStr;
use std::time::Duration;

/// When a server writes its ring file back (`msync`), waiting for the write.
///
/// A ring on tmpfs (`/dev/shm`) lives in memory: the server's crash never loses its committed records, a
/// reboot loses them all, and syncing changes neither. A ring on disk keeps, after a power cut, what the
/// kernel had written back: with [`SyncPolicy::Never`] that is up to the kernel (usually the last 30 s are at
/// risk); with a policy, everything committed before the last sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncPolicy {
    /// Never: the kernel writes back when it will.
    #[default]
    Never,
    /// After every this many records.
    Records(NonZeroU64),
    /// At the first record committed this long after the last sync.
    Every(Duration),
}

impl fmt::Display for SyncPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyncPolicy::Never => f.write_str("never"),
            SyncPolicy::Records(n) => write!(f, "every {n} records"),
            SyncPolicy::Every(d) => write!(f, "every {} ms", d.as_millis()),
        }
    }
}

/// A `--sync` value that is neither `never`, a record count nor a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a sync policy: `never`, a number of records (100), or a time (10ms, 1s)")]
pub struct BadSyncPolicy(pub String);

impl FromStr for SyncPolicy {
    type Err = BadSyncPolicy;

    /// `never` (or `0`), a number of records (`100`), or a time with its unit (`10ms`, `1s`, `500us`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let t = text.trim();
        let bad = || BadSyncPolicy(text.to_owned());
        if t == "never" || t == "0" {
            return Ok(SyncPolicy::Never);
        }
        if let Ok(n) = t.parse::<u64>() {
            return NonZeroU64::new(n).map(SyncPolicy::Records).ok_or_else(bad);
        }
        let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let (number, unit) = t.split_at(split);
        let n: u64 = number.parse().map_err(|_| bad())?;
        let duration = match unit {
            "us" => Duration::from_micros(n),
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            _ => return Err(bad()),
        };
        match duration.is_zero() {
            true => Ok(SyncPolicy::Never),
            false => Ok(SyncPolicy::Every(duration)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_read_as_written() {
        assert_eq!("never".parse(), Ok(SyncPolicy::Never));
        assert_eq!("0".parse(), Ok(SyncPolicy::Never));
        assert_eq!(
            "100".parse(),
            Ok(SyncPolicy::Records(NonZeroU64::new(100).unwrap()))
        );
        assert_eq!(
            "10ms".parse(),
            Ok(SyncPolicy::Every(Duration::from_millis(10)))
        );
        assert_eq!("1s".parse(), Ok(SyncPolicy::Every(Duration::from_secs(1))));
        for bad in ["", "often", "10 ms", "-1", "5h", "ms"] {
            assert!(bad.parse::<SyncPolicy>().is_err(), "{bad:?}");
        }
        assert_eq!(
            SyncPolicy::Every(Duration::from_millis(10)).to_string(),
            "every 10 ms"
        );
    }
}
