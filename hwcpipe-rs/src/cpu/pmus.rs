//! [`CpuPmus`]: the Arm CPU PMUs of this system as counters see them — one per core type (a big.LITTLE or
//! DynamIQ system has several, each with its own perf `type` and CPUs), each with the core it serves (by
//! MIDR_EL1), the events the kernel lists for it (which follow PMCEID0/1_EL0) and, where Arm's per-core
//! event list is given ([`PmuData`](super::PmuData), `json` feature), every event Arm documents for the core.
//!
//! Whether a core has an event is decided here, before anything is opened ([`CpuPmu::check`]): a common
//! event (0x0000–0x003F, 0x4000–0x403F) by the kernel's list, which is what PMCEID says; any other number by
//! Arm's list for the core when it is loaded; otherwise the number is opened unchecked and says so.

use core::fmt;

use pmu_regs::{ArmEvent, CommonEventSet};

use crate::sys::arm_pmu::{ArmPmu, ArmPmuError};
use crate::sys::PerfSys;

/// One event of Arm's list for a core.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreEvent {
    /// Its number.
    pub code: u16,
    /// Arm's mnemonic, when the list gives one.
    pub name: Option<String>,
    /// Arm's description.
    pub description: String,
}

/// How it was established that a core has an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Checked {
    /// A common event the kernel lists for the PMU: PMCEID0/1_EL0 say the core implements it.
    Pmceid,
    /// Arm's event list for the core has it (PMCEID cannot describe it).
    EventList,
    /// The kernel lists it for the PMU (an IMPLEMENTATION DEFINED event the driver names for the core).
    KernelList,
    /// Nothing says: neither PMCEID nor a loaded event list can describe the number. It is counted as
    /// asked; a core without it counts nothing.
    Unchecked,
}

impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Checked::Pmceid => "implemented (PMCEID0/1_EL0, the kernel's event list)",
            Checked::EventList => "in Arm's event list for the core",
            Checked::KernelList => "in the kernel's event list for the PMU",
            Checked::Unchecked => {
                "not checked: no event list for this core (give Arm's PMU data with LIZARD_PMU_DATA)"
            }
        })
    }
}

/// Why a core does not have an event, decided before anything is opened.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum NotOnPmu {
    /// A common event the kernel does not list for the PMU: PMCEID0/1_EL0 say the core does not
    /// implement it.
    NotImplemented {
        /// The core (or PMU) name.
        core: String,
        /// The event number.
        code: u16,
    },
    /// A number Arm's event list for the core does not have.
    NotInEventList {
        /// The core's name.
        core: String,
        /// The event number.
        code: u16,
    },
    /// The name is not an event of this core (its list, the kernel's, or the architecture's).
    UnknownName {
        /// The core (or PMU) name.
        core: String,
    },
}

impl fmt::Display for NotOnPmu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotOnPmu::NotImplemented { core, code } => write!(
                f,
                "{core} does not implement event {code:#06x} (PMCEID0/1_EL0: not in the kernel's event \
                 list for its PMU)"
            ),
            NotOnPmu::NotInEventList { core, code } => {
                write!(f, "event {code:#06x} is not in Arm's event list for {core}")
            }
            NotOnPmu::UnknownName { core } => write!(f, "not an event of {core}"),
        }
    }
}

/// One Arm CPU PMU: a core type, its CPUs, and what it counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuPmu {
    /// The kernel's name for it (`armv8_cortex_a76`, `armv8_pmuv3_0`).
    pub name: String,
    /// The `perf_event_attr.type` that reaches it.
    pub perf_type: u32,
    /// The CPUs it serves.
    pub cpus: Vec<u32>,
    /// MIDR_EL1 of its first CPU, when the kernel shows it.
    pub midr: Option<u64>,
    /// The core's name from Arm's CPU list (`Cortex-A76`), when Arm's data is loaded and knows it.
    pub core: Option<String>,
    /// The events the kernel lists for it (sysfs name, number).
    pub kernel_events: Vec<(String, u16)>,
    /// Arm's event list for the core, when loaded.
    pub core_events: Option<Vec<CoreEvent>>,
    /// The number of event counters (PMCR_EL0.N) Arm's list gives for the core.
    pub counters: Option<u8>,
    /// PMMIR_EL1.SLOTS (the kernel's `caps/slots`): operations issued per cycle at most.
    pub slots: Option<u32>,
}

/// One event a PMU offers, for a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedEvent {
    /// Its number.
    pub code: u16,
    /// Its name: Arm's mnemonic where known, else the kernel's name in upper case.
    pub name: String,
    /// Arm's description, when known.
    pub description: Option<String>,
    /// Whether the core has it, and how that is known.
    pub status: Result<Checked, NotOnPmu>,
}

impl CpuPmu {
    /// The description the kernel gives, without a core list.
    pub fn from_kernel(pmu: ArmPmu, midr: Option<u64>) -> CpuPmu {
        CpuPmu {
            name: pmu.name,
            perf_type: pmu.perf_type,
            cpus: pmu.cpus,
            midr,
            core: None,
            kernel_events: pmu.events,
            core_events: None,
            counters: None,
            slots: pmu.slots,
        }
    }

    /// The core's name, else the PMU's (`Cortex-A76`, `armv8_pmuv3`).
    pub fn label(&self) -> &str {
        self.core.as_deref().unwrap_or(&self.name)
    }

    /// The common events the kernel lists, as PMCEID0/1 would show them.
    fn pmceid(&self) -> CommonEventSet {
        let mut set = CommonEventSet::default();
        for &(_, code) in &self.kernel_events {
            // Numbers PMCEID cannot describe are not part of the set.
            let _ = set.insert(code);
        }
        set
    }

    /// Whether the core has event `code`, and how that is known (see the module documentation).
    pub fn check(&self, code: u16) -> Result<Checked, NotOnPmu> {
        let kernel_lists = self.kernel_events.iter().any(|&(_, c)| c == code);
        if CommonEventSet::bit_of(code).is_ok() && !self.kernel_events.is_empty() {
            return match self.pmceid().contains(code) {
                true => Ok(Checked::Pmceid),
                false => Err(NotOnPmu::NotImplemented {
                    core: self.label().to_owned(),
                    code,
                }),
            };
        }
        if kernel_lists {
            return Ok(Checked::KernelList);
        }
        match &self.core_events {
            Some(list) if list.iter().any(|e| e.code == code) => Ok(Checked::EventList),
            Some(_) => Err(NotOnPmu::NotInEventList {
                core: self.label().to_owned(),
                code,
            }),
            None => Ok(Checked::Unchecked),
        }
    }

    /// The number this core gives the event named `name` (ignoring ASCII case): the kernel's name, Arm's
    /// mnemonic in the core's list, or an event the architecture names.
    pub fn code_of(&self, name: &str) -> Option<u16> {
        if let Some(&(_, code)) = self
            .kernel_events
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            return Some(code);
        }
        if let Some(list) = &self.core_events {
            if let Some(e) = list.iter().find(|e| {
                e.name
                    .as_deref()
                    .is_some_and(|n| n.eq_ignore_ascii_case(name))
            }) {
                return Some(e.code);
            }
        }
        architected_code(name)
    }

    /// Arm's mnemonic and description for `code` on this core, where known.
    pub fn describe(&self, code: u16) -> (Option<String>, Option<String>) {
        let listed = self
            .core_events
            .as_ref()
            .and_then(|list| list.iter().find(|e| e.code == code));
        let architected = ArmEvent::from_code(code);
        let name = listed
            .and_then(|e| e.name.clone())
            .or_else(|| architected.map(|e| e.mnemonic().to_owned()))
            .or_else(|| {
                self.kernel_events
                    .iter()
                    .find(|&&(_, c)| c == code)
                    .map(|(n, _)| n.to_ascii_uppercase())
            });
        let description =
            listed
                .map(|e| e.description.trim().to_owned())
                .or_else(|| match architected {
                    Some(ArmEvent::Common(e)) => Some(e.description().to_owned()),
                    _ => None,
                });
        (name, description)
    }

    /// Every event the kernel or Arm's list names for this PMU, by number, with whether the core has it.
    pub fn events(&self) -> Vec<ListedEvent> {
        let mut codes: Vec<u16> = self.kernel_events.iter().map(|&(_, c)| c).collect();
        if let Some(list) = &self.core_events {
            codes.extend(list.iter().map(|e| e.code));
        }
        codes.sort_unstable();
        codes.dedup();
        codes
            .into_iter()
            .map(|code| {
                let (name, description) = self.describe(code);
                ListedEvent {
                    code,
                    name: name.unwrap_or_else(|| format!("r{code:04x}")),
                    description,
                    status: self.check(code),
                }
            })
            .collect()
    }
}

/// The number the architecture gives the event `name` (common or recommended), ignoring ASCII case.
pub(super) fn architected_code(name: &str) -> Option<u16> {
    pmu_regs::CommonEvent::ALL
        .iter()
        .map(|e| (e.mnemonic(), e.code()))
        .chain(
            pmu_regs::RecommendedEvent::ALL
                .iter()
                .map(|e| (e.mnemonic(), e.code())),
        )
        .find(|(m, _)| m.eq_ignore_ascii_case(name))
        .map(|(_, code)| code)
}

/// The Arm CPU PMUs of a system (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuPmus {
    pmus: Vec<CpuPmu>,
}

impl CpuPmus {
    /// The PMUs `pmus`, in this order.
    pub fn new(pmus: Vec<CpuPmu>) -> CpuPmus {
        CpuPmus { pmus }
    }

    /// The PMUs the kernel behind `sys` describes, each with the MIDR of its first CPU; no core lists.
    pub fn from_kernel(sys: &dyn PerfSys) -> Result<CpuPmus, ArmPmuError> {
        let pmus = sys
            .arm_pmus()?
            .into_iter()
            .map(|pmu| {
                let midr = pmu.cpus.first().and_then(|&cpu| sys.midr(cpu));
                CpuPmu::from_kernel(pmu, midr)
            })
            .collect();
        Ok(CpuPmus { pmus })
    }

    /// Adds Arm's event list to every PMU whose core `data` has one.
    #[cfg(feature = "json")]
    pub fn with_event_lists(
        mut self,
        data: &super::PmuData,
    ) -> Result<CpuPmus, super::PmuDataError> {
        for pmu in &mut self.pmus {
            let Some(midr) = pmu.midr else { continue };
            let Some(list) = data.for_midr(midr)? else {
                continue;
            };
            pmu.counters = list.catalog.counters();
            pmu.core_events = Some(
                list.catalog
                    .iter()
                    .map(|e| CoreEvent {
                        code: e.code,
                        name: e.name.clone(),
                        description: e.description.clone(),
                    })
                    .collect(),
            );
            pmu.core = Some(list.core);
        }
        Ok(self)
    }

    /// The PMUs of this machine: the kernel's description, with Arm's event lists from the folder
    /// `LIZARD_PMU_DATA` names, when it names one ([`PmuData::from_env`](super::PmuData::from_env)).
    #[cfg(feature = "json")]
    pub fn discover() -> Result<CpuPmus, PmusError> {
        Self::discover_with(&crate::sys::LinuxPerf, super::PmuData::from_env()?.as_ref())
    }

    /// The PMUs `sys` describes, with the event lists of `data` when given.
    #[cfg(feature = "json")]
    pub fn discover_with(
        sys: &dyn PerfSys,
        data: Option<&super::PmuData>,
    ) -> Result<CpuPmus, PmusError> {
        let pmus = CpuPmus::from_kernel(sys)?;
        Ok(match data {
            Some(data) => pmus.with_event_lists(data)?,
            None => pmus,
        })
    }

    /// The PMUs, in the kernel's order (by name).
    pub fn pmus(&self) -> &[CpuPmu] {
        &self.pmus
    }

    /// Whether there is no Arm PMU (another architecture, or a kernel without the driver).
    pub fn is_empty(&self) -> bool {
        self.pmus.is_empty()
    }

    /// Whether the CPUs are of more than one type (big.LITTLE, DynamIQ): more than one PMU.
    pub fn is_heterogeneous(&self) -> bool {
        self.pmus.len() > 1
    }

    /// The PMU serving `cpu`.
    pub fn pmu_of_cpu(&self, cpu: u32) -> Option<usize> {
        self.pmus.iter().position(|p| p.cpus.contains(&cpu))
    }
}

/// Why the PMUs could not be described.
#[cfg(feature = "json")]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PmusError {
    /// The kernel's sysfs description could not be read.
    #[error("the kernel's description of the Arm PMUs")]
    Kernel(#[from] ArmPmuError),
    /// Arm's PMU data could not be read.
    #[error("Arm's PMU data ({})", super::PMU_DATA_VAR)]
    Data(#[from] super::PmuDataError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::sim::qemu_a72_pmu as a72;

    #[test]
    fn common_events_are_checked_by_pmceid_and_others_by_the_list() {
        let pmu = a72(true);
        assert_eq!(pmu.check(0x08), Ok(Checked::Pmceid));
        assert_eq!(
            pmu.check(0x24),
            Err(NotOnPmu::NotImplemented {
                core: "Cortex-A72".into(),
                code: 0x24
            })
        );
        assert_eq!(pmu.check(0x60), Ok(Checked::EventList));
        assert_eq!(
            pmu.check(0x61),
            Err(NotOnPmu::NotInEventList {
                core: "Cortex-A72".into(),
                code: 0x61
            })
        );
        // Without Arm's list an IMPLEMENTATION DEFINED number cannot be checked.
        assert_eq!(a72(false).check(0x61), Ok(Checked::Unchecked));
        assert!(NotOnPmu::NotImplemented {
            core: "Cortex-A72".into(),
            code: 0x24
        }
        .to_string()
        .contains("PMCEID"));
    }

    #[test]
    fn names_are_the_kernels_arms_or_the_architectures() {
        let pmu = a72(true);
        assert_eq!(pmu.code_of("INST_RETIRED"), Some(0x08));
        assert_eq!(pmu.code_of("cpu_cycles"), Some(0x11));
        assert_eq!(pmu.code_of("bus_access_rd"), Some(0x60));
        assert_eq!(pmu.code_of("STALL_BACKEND"), Some(0x24), "architected");
        assert_eq!(pmu.code_of("NO_SUCH_EVENT"), None);
        assert_eq!(
            pmu.describe(0x08),
            (
                Some("INST_RETIRED".into()),
                Some("Instruction architecturally executed".into())
            )
        );
        let listed = pmu.events();
        assert_eq!(
            listed.iter().map(|e| e.code).collect::<Vec<_>>(),
            [0x08, 0x11, 0x60]
        );
    }

    #[test]
    fn the_pmu_of_a_cpu() {
        let mut little = a72(false);
        little.cpus = vec![0, 1];
        let mut big = a72(false);
        big.name = "armv8_pmuv3_1".into();
        big.cpus = vec![2, 3];
        let pmus = CpuPmus::new(vec![little, big]);
        assert!(pmus.is_heterogeneous());
        assert_eq!(pmus.pmu_of_cpu(3), Some(1));
        assert_eq!(pmus.pmu_of_cpu(9), None);
    }
}
