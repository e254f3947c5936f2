//! CPU lists: parsing `--cpu 0-3,6` and reading which CPUs are online.

use std::path::Path;

use super::error::TargetError;

/// The kernel's list of online CPUs.
const ONLINE: &str = "/sys/devices/system/cpu/online";

/// Parses a CPU list in the kernel's notation (`0-3,6`, `2`): sorted, without duplicates.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, String> {
    let bad = || format!("'{text}' is not a CPU list (e.g. 0-3,6)");
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        let part = part.trim();
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let first: u32 = first.parse().map_err(|_| bad())?;
        let last: u32 = last.parse().map_err(|_| bad())?;
        if first > last || last - first >= 65_536 {
            return Err(bad());
        }
        cpus.extend(first..=last);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// The CPUs the kernel has online.
pub fn online_cpus() -> Result<Vec<u32>, TargetError> {
    online_cpus_from(Path::new(ONLINE))
}

fn online_cpus_from(path: &Path) -> Result<Vec<u32>, TargetError> {
    let text = std::fs::read_to_string(path).map_err(|source| TargetError::Proc {
        path: path.to_owned(),
        source,
    })?;
    parse_cpu_list(&text).map_err(|reason| TargetError::Proc {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, reason),
    })
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
        assert_eq!(parse_cpu_list("2"), Ok(vec![2]));
        assert_eq!(parse_cpu_list(" 1, 0,1 \n"), Ok(vec![0, 1]));
        for bad in ["", "a", "3-1", "1-", "-1", "0-4294967295", "1,,2"] {
            assert!(parse_cpu_list(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn lists_format_back_as_ranges() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn this_machine_has_an_online_cpu_and_a_missing_list_is_an_error() {
        assert!(!online_cpus().expect("online CPUs").is_empty());
        let err = online_cpus_from(Path::new("/nonexistent/online")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/online"), "{err}");
    }
}
