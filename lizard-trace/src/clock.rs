//! The record clock: `CLOCK_MONOTONIC_RAW`, the clock gatord and HWCPipe stamp counter samples with, so trace
//! records and counter samples line up without conversion.

/// Nanoseconds of `CLOCK_MONOTONIC_RAW` now.
pub fn monotonic_raw_ns() -> u64 {
    crate::sys::monotonic_raw_ns()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_forward() {
        let a = monotonic_raw_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = monotonic_raw_ns();
        assert!(a > 0);
        assert!(b >= a + 1_000_000, "{a} -> {b}");
    }
}
