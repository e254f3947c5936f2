//! The CPU time a counted command spent, as the kernel accounts it to this process's reaped children
//! (`/proc/self/stat`'s `cutime` and `cstime`): `perf stat`'s user and system lines.

use std::time::Duration;

/// User and system CPU time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChildTimes {
    /// Time in user space.
    pub user: Duration,
    /// Time in the kernel on its behalf.
    pub system: Duration,
}

impl ChildTimes {
    /// The CPU time of every child of this process reaped so far; `None` where `/proc` cannot tell.
    pub fn now() -> Option<ChildTimes> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        parse(&stat, rustix::param::clock_ticks_per_second())
    }

    /// The time spent between `earlier` and `self`.
    pub fn since(self, earlier: ChildTimes) -> ChildTimes {
        ChildTimes {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }
}

/// `cutime` and `cstime` (fields 16 and 17) of a `/proc/PID/stat` line, in clock ticks of `hz`.
fn parse(stat: &str, hz: u64) -> Option<ChildTimes> {
    // The command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Field 3 (state) is fields[0]: cutime is field 16, cstime field 17.
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    let (user, system) = (ticks(13)?, ticks(14)?);
    let hz = hz.max(1);
    let time = |t: u64| Duration::from_nanos(t.saturating_mul(1_000_000_000) / hz);
    Some(ChildTimes {
        user: time(user),
        system: time(system),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_times_are_read_after_the_name() {
        let line =
            "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 200 0 0 5 6 250 75 20 0 1 0 99 1 1";
        let times = parse(line, 100).unwrap();
        assert_eq!(times.user, Duration::from_millis(2500));
        assert_eq!(times.system, Duration::from_millis(750));
        assert_eq!(parse("4242 (x) S 1", 100), None);
    }

    #[test]
    fn this_process_has_children_times() {
        let before = ChildTimes::now().expect("/proc/self/stat");
        std::process::Command::new("true")
            .status()
            .expect("run true");
        let after = ChildTimes::now().expect("/proc/self/stat");
        assert!(after.user >= before.user && after.system >= before.system);
    }
}
