//! CPU lists in the kernel's notation (`0-3,6`): what `/sys/devices/system/cpu/online` and an Arm PMU's
//! `cpus` file hold and what `--cpu` takes. The crate's one parser of them, and its inverse.

use std::num::ParseIntError;

/// One more than the largest CPU number a list may name: 8192, the largest `NR_CPUS` Linux can be
/// built with. It bounds what a list costs to parse, whatever its ranges.
pub const MAX_CPUS: u32 = 8192;

/// Why a text is not a CPU list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CpuListError {
    /// The list, or an entry between two commas, is empty.
    #[error("a CPU list or an entry of one is empty")]
    Empty,
    /// An entry's CPU number is not a decimal number.
    #[error("'{entry}' is not a CPU number or a range of them such as 0-3")]
    NotANumber {
        /// The entry, as written.
        entry: String,
        /// Why the number did not parse.
        #[source]
        source: ParseIntError,
    },
    /// A range whose last CPU comes before its first (`3-1`).
    #[error("the CPU range {first}-{last} runs backwards")]
    Backwards {
        /// The range's first CPU.
        first: u32,
        /// The range's last CPU.
        last: u32,
    },
    /// A CPU number of [`MAX_CPUS`] or more.
    #[error("CPU {cpu} is beyond the largest CPU number Linux supports, {}", MAX_CPUS - 1)]
    TooLarge {
        /// The number.
        cpu: u32,
    },
}

/// Parses a CPU list in the kernel's notation (`0-3,6`, `2`; blanks around entries allowed): every CPU
/// it names, ascending, each once.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, CpuListError> {
    const WORD: usize = u64::BITS as usize;
    let mut named = [0u64; MAX_CPUS as usize / WORD];
    for entry in text.trim().split(',') {
        let entry = entry.trim();
        let (first, last) = match entry.split_once('-') {
            Some((first, last)) => (cpu_number(entry, first)?, cpu_number(entry, last)?),
            None => {
                let cpu = cpu_number(entry, entry)?;
                (cpu, cpu)
            }
        };
        if first > last {
            return Err(CpuListError::Backwards { first, last });
        }
        for cpu in first..=last {
            named[cpu as usize / WORD] |= 1 << (cpu as usize % WORD);
        }
    }
    Ok((0..MAX_CPUS)
        .filter(|&cpu| named[cpu as usize / WORD] & (1 << (cpu as usize % WORD)) != 0)
        .collect())
}

/// One CPU number of `entry`, below [`MAX_CPUS`].
fn cpu_number(entry: &str, number: &str) -> Result<u32, CpuListError> {
    let number = number.trim();
    if number.is_empty() && entry.is_empty() {
        return Err(CpuListError::Empty);
    }
    let cpu: u32 = number.parse().map_err(|source| CpuListError::NotANumber {
        entry: entry.to_owned(),
        source,
    })?;
    if cpu >= MAX_CPUS {
        return Err(CpuListError::TooLarge { cpu });
    }
    Ok(cpu)
}

/// `cpus` as the kernel writes a CPU list: ranges joined by commas (`0-3,6`).
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut iter = cpus.iter().copied().peekable();
    while let Some(first) = iter.next() {
        let mut last = first;
        while iter.peek() == Some(&(last + 1)) {
            last += 1;
            iter.next();
        }
        parts.push(if first == last {
            first.to_string()
        } else {
            format!("{first}-{last}")
        });
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_in_kernel_notation() {
        assert_eq!(parse_cpu_list("0-3,6"), Ok(vec![0, 1, 2, 3, 6]));
        assert_eq!(parse_cpu_list("0"), Ok(vec![0]));
        assert_eq!(parse_cpu_list("2"), Ok(vec![2]));
        assert_eq!(parse_cpu_list(" 1, 0,1 \n"), Ok(vec![0, 1]));
        assert_eq!(parse_cpu_list("4 - 5,3-3"), Ok(vec![3, 4, 5]));
        assert_eq!(parse_cpu_list("0-8191").map(|cpus| cpus.len()), Ok(8192));
    }

    #[test]
    fn each_kind_of_bad_list_is_its_own_error() {
        for empty in ["", " \n", "1,,2", "1,"] {
            assert_eq!(parse_cpu_list(empty), Err(CpuListError::Empty), "{empty:?}");
        }
        for not_a_number in ["a", "1-", "-1", "1-2-3", "0x1", "+", "1-b"] {
            assert!(
                matches!(
                    parse_cpu_list(not_a_number),
                    Err(CpuListError::NotANumber { .. })
                ),
                "{not_a_number:?}"
            );
        }
        assert_eq!(
            parse_cpu_list("3-1"),
            Err(CpuListError::Backwards { first: 3, last: 1 })
        );
        for (too_large, cpu) in [
            ("8192", 8192),
            ("0-100000", 100_000),
            ("0-4294967295", u32::MAX),
        ] {
            assert_eq!(
                parse_cpu_list(too_large),
                Err(CpuListError::TooLarge { cpu }),
                "{too_large:?}"
            );
        }
        let err = parse_cpu_list("4294967296").unwrap_err();
        assert!(matches!(err, CpuListError::NotANumber { .. }), "{err:?}");
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn a_long_list_of_wide_ranges_costs_no_more_than_one() {
        let text = vec!["0-8191"; 1_000].join(",");
        assert_eq!(parse_cpu_list(&text).map(|cpus| cpus.len()), Ok(8192));
    }

    #[test]
    fn lists_format_back_as_ranges() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(format_cpu_list(&[]), "");
        let cpus = [0, 2, 3, 4, 7, 8191];
        assert_eq!(parse_cpu_list(&format_cpu_list(&cpus)), Ok(cpus.to_vec()));
    }
}
