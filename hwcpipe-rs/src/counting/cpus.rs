//! Which CPUs are online.

use std::path::Path;

use super::error::TargetError;
use crate::cpu_list::parse_cpu_list;

/// The kernel's list of online CPUs.
const ONLINE: &str = "/sys/devices/system/cpu/online";

/// The CPUs the kernel has online.
pub fn online_cpus() -> Result<Vec<u32>, TargetError> {
    online_cpus_from(Path::new(ONLINE))
}

fn online_cpus_from(path: &Path) -> Result<Vec<u32>, TargetError> {
    let text = std::fs::read_to_string(path).map_err(|source| TargetError::Proc {
        path: path.to_owned(),
        source,
    })?;
    parse_cpu_list(&text).map_err(|err| TargetError::Proc {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, err),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_has_an_online_cpu_and_a_missing_list_is_an_error() {
        assert!(!online_cpus().expect("online CPUs").is_empty());
        let err = online_cpus_from(Path::new("/nonexistent/online")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/online"), "{err}");
    }
}
