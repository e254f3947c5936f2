//! The protocol version a daemon announces in its `GATOR <n>\n` handshake line.

use std::fmt;

/// A gatord `PROTOCOL_VERSION`, e.g. 670 for gatord 6.7 and 950 for gatord 9.5 to 9.7.
///
/// Release builds announce a positive number; development builds announce a negative one. Development builds are
/// treated as the newest protocol by the version checks below.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProtocolVersion(pub i64);

impl ProtocolVersion {
    /// gatord 6.7, the daemon generation Lizard was written against.
    pub const V670: ProtocolVersion = ProtocolVersion(670);
    /// gatord 7.5: adds EXIT, REQUEST_CURRENT_CONFIG and RESPONSE_CURRENT_CONFIG.
    pub const V750: ProtocolVersion = ProtocolVersion(750);
    /// gatord 8.7: adds RESPONSE_GATOR_LOG.
    pub const V870: ProtocolVersion = ProtocolVersion(870);
    /// gatord 8.9: adds RESPONSE_ACTIVITY_STARTED.
    pub const V890: ProtocolVersion = ProtocolVersion(890);
    /// gatord 9.1: the SUMMARY frame gains a fourth clock, CLOCK_MONOTONIC.
    pub const V910: ProtocolVersion = ProtocolVersion(910);
    /// gatord 9.5 to 9.7.2.
    pub const V950: ProtocolVersion = ProtocolVersion(950);

    /// True for development builds (negative numbers).
    pub fn is_development(self) -> bool {
        self.0 < 0
    }

    /// True when this version is `other` or newer (development builds count as newest).
    pub fn at_least(self, other: ProtocolVersion) -> bool {
        self.is_development() || self.0 >= other.0
    }

    /// How many int64 clocks a SUMMARY message carries: 3 before protocol 910, 4 from 910.
    pub fn summary_clock_count(self) -> usize {
        if self.at_least(Self::V910) {
            4
        } else {
            3
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_count_switches_at_910() {
        assert_eq!(ProtocolVersion(670).summary_clock_count(), 3);
        assert_eq!(ProtocolVersion(900).summary_clock_count(), 3);
        assert_eq!(ProtocolVersion(910).summary_clock_count(), 4);
        assert_eq!(ProtocolVersion(950).summary_clock_count(), 4);
        assert_eq!(ProtocolVersion(-95_000_001).summary_clock_count(), 4);
    }

    #[test]
    fn feature_gates() {
        assert!(!ProtocolVersion::V670.at_least(ProtocolVersion::V750));
        assert!(ProtocolVersion::V950.at_least(ProtocolVersion::V890));
        assert_eq!(ProtocolVersion::V950.to_string(), "950");
    }
}
