//! Which counters a counting counts, from the names a user gave.

use hwcpipe::cpu::{CpuMetric, METRICS};
use hwcpipe::{CpuCounter, GpuCounter};

/// The counters asked for by name: CPU counters, HWCPipe GPU counters, and the other names, which may be
/// Arm PMU events of the CPU (by Arm's mnemonic, the kernel's name or number) or counters of Arm's database
/// for the Mali GPU (resolved by [`count`](super::count): the events against the CPU's PMUs, the database's
/// once the GPU is open, or refused there as unknown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The CPU counters counted, in the order asked (metric inputs after them).
    pub cpu: Vec<CpuCounter>,
    /// Whether the CPU counters are shown: `false` when only GPU counters were asked for, and the
    /// target runs under a task clock that is not part of the result.
    pub cpu_shown: bool,
    /// The HWCPipe GPU counters.
    pub gpu: Vec<GpuCounter>,
    /// The other names (trimmed): Arm PMU events of the CPU, or counters of Arm's Mali database.
    pub database: Vec<String>,
    /// Whether the CPU metrics are computed (their counter inputs are then in [`cpu`](Self::cpu), and their
    /// events are counted where the CPU has an Arm PMU).
    pub metrics: bool,
}

impl Choice {
    /// The counters `names` names (ignoring ASCII case and surrounding blanks); no names: every CPU and
    /// HWCPipe GPU counter. With `metrics`, every metric's inputs are counted too.
    pub fn new(names: &[String], metrics: bool) -> Choice {
        let (mut cpu, gpu, database) = by_kind(names);
        if metrics {
            for input in METRICS.iter().flat_map(CpuMetric::inputs) {
                if !cpu.contains(&input) {
                    cpu.push(input);
                }
            }
        }
        // Only GPU counters: the target still runs under a CPU counting, whose life is the counting's.
        let cpu_shown = !cpu.is_empty();
        if !cpu_shown {
            cpu.push(CpuCounter::TaskClock);
        }
        Choice {
            cpu,
            cpu_shown,
            gpu,
            database,
            metrics,
        }
    }
}

/// `names` split into CPU counters, HWCPipe GPU counters and other names.
fn by_kind(names: &[String]) -> (Vec<CpuCounter>, Vec<GpuCounter>, Vec<String>) {
    if names.is_empty() {
        return (
            CpuCounter::ALL.to_vec(),
            GpuCounter::ALL.to_vec(),
            Vec::new(),
        );
    }
    let (mut cpu, mut gpu, mut database) = (Vec::new(), Vec::new(), Vec::new());
    for name in names {
        let wanted = name.trim();
        if let Some(c) = CpuCounter::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(wanted))
        {
            cpu.push(c);
        } else if let Some(g) = GpuCounter::ALL
            .into_iter()
            .find(|g| g.name().eq_ignore_ascii_case(wanted))
        {
            gpu.push(g);
        } else {
            database.push(wanted.to_owned());
        }
    }
    (cpu, gpu, database)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn no_names_is_every_cpu_and_gpu_counter() {
        let choice = Choice::new(&[], false);
        assert_eq!(choice.cpu, CpuCounter::ALL.to_vec());
        assert_eq!(choice.gpu, GpuCounter::ALL.to_vec());
        assert!(choice.database.is_empty() && choice.cpu_shown);
    }

    #[test]
    fn names_are_sorted_by_kind_ignoring_case() {
        let choice = Choice::new(
            &names(&[" taskclock ", "GPUCYCLES", "MaliGPUActiveCy"]),
            false,
        );
        assert_eq!(choice.cpu, vec![CpuCounter::TaskClock]);
        assert_eq!(choice.gpu, vec![GpuCounter::GpuCycles]);
        assert_eq!(choice.database, names(&["MaliGPUActiveCy"]));
    }

    #[test]
    fn only_gpu_names_count_under_a_hidden_task_clock() {
        let choice = Choice::new(&names(&["GpuCycles"]), false);
        assert!(!choice.cpu_shown);
        assert_eq!(choice.cpu, vec![CpuCounter::TaskClock]);
    }

    #[test]
    fn metrics_add_their_inputs_once() {
        let choice = Choice::new(&names(&["Cycles"]), true);
        assert_eq!(choice.cpu[0], CpuCounter::Cycles);
        assert!(choice.cpu.contains(&CpuCounter::Instructions));
        let cycles = choice.cpu.iter().filter(|c| **c == CpuCounter::Cycles);
        assert_eq!(cycles.count(), 1);
    }
}
