//! The open-file limit, which counting a process with many threads (one descriptor per counter per
//! thread) or many CPUs soon reaches: raised to the hard limit before opening, as `perf` does, and named
//! when it is still not enough.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// `RLIMIT_NOFILE` as (soft, hard); `u64::MAX` stands for no limit.
pub fn open_file_limits() -> (u64, u64) {
    let limit = getrlimit(Resource::Nofile);
    (
        limit.current.unwrap_or(u64::MAX),
        limit.maximum.unwrap_or(u64::MAX),
    )
}

/// Raises the soft open-file limit to the hard limit (which needs no privilege); returns the soft limit
/// in force afterwards. A refusal leaves the limit as it was: opening may still fit.
pub fn raise_open_file_limit() -> u64 {
    let limit = getrlimit(Resource::Nofile);
    if limit.current == limit.maximum {
        return open_file_limits().0;
    }
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    let _ = setrlimit(Resource::Nofile, raised);
    open_file_limits().0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_rises_to_the_hard_one() {
        let (_, hard) = open_file_limits();
        assert_eq!(raise_open_file_limit(), hard);
        assert_eq!(open_file_limits(), (hard, hard));
        // Raising again changes nothing.
        assert_eq!(raise_open_file_limit(), hard);
    }
}
