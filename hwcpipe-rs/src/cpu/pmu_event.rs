//! [`PmuEvent`]: an Arm PMU event a user named ([`EventSpec`]), resolved against the system's PMUs
//! ([`CpuPmus::resolve`]): its number on each PMU (IMPLEMENTATION DEFINED numbers differ between cores),
//! the perf `type` that reaches that PMU, and, where the core does not have it, why — before anything is
//! opened. On a big.LITTLE system an event is opened on every PMU that has it, for that PMU's CPUs, and
//! counted per core type as well as summed; `PERF_TYPE_RAW`, which the kernel gives to one PMU only, is
//! never used for it.

use core::fmt;

use super::event_spec::{EventName, EventSpec, EventSpecError};
use super::pmus::{architected_code, Checked, CpuPmus, NotOnPmu};

/// An event on one PMU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The PMU's position in [`CpuPmus::pmus`].
    pub pmu: usize,
    /// The kernel's name for the PMU (`armv8_cortex_a55`).
    pub pmu_name: String,
    /// The core's name, else the PMU's (`Cortex-A55`).
    pub label: String,
    /// The perf `type` that reaches the PMU.
    pub perf_type: u32,
    /// The CPUs of the PMU.
    pub cpus: Vec<u32>,
    /// The number of event counters of the core, when Arm's list gives it: the largest group.
    pub counters: Option<u8>,
    /// The event's number on this PMU and how it is known the core has it, or why it does not.
    pub status: Result<(u16, Checked), NotOnPmu>,
}

/// An Arm PMU event resolved against the system's PMUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmuEvent {
    /// Its name: Arm's mnemonic where known (`INST_RETIRED` for `inst_retired`, `0x08` or `r8`), else
    /// `rNNNN`.
    pub name: String,
    /// Arm's description, where known.
    pub description: Option<String>,
    /// One per PMU it may be on (every PMU, or the one the user named), in [`CpuPmus::pmus`] order; none
    /// on a system without an Arm PMU.
    pub placements: Vec<Placement>,
}

impl PmuEvent {
    /// The unit of its counts: cycles for the events that count cycles (`CPU_CYCLES`, `BUS_CYCLES`,
    /// `CNT_CYCLES`, the `STALL*` cycle counts), else events.
    pub fn unit(&self) -> crate::Unit {
        let name = self
            .name
            .rsplit('/')
            .find(|part| !part.is_empty())
            .unwrap_or(&self.name);
        let cycles = name.ends_with("_CYCLES")
            || matches!(
                name,
                "STALL" | "STALL_FRONTEND" | "STALL_BACKEND" | "STALL_BACKEND_MEM"
            );
        if cycles {
            crate::Unit::Cycles
        } else {
            crate::Unit::Events
        }
    }

    /// Whether some PMU has it.
    pub fn is_on_some_pmu(&self) -> bool {
        self.placements.iter().any(|p| p.status.is_ok())
    }

    /// Whether only some of the system's PMUs have it (an event of one cluster only).
    pub fn is_partial(&self) -> bool {
        self.is_on_some_pmu() && self.placements.iter().any(|p| p.status.is_err())
    }
}

/// Why a name is not an event of this system.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EventError {
    /// The spelling is not an event name or number.
    #[error(transparent)]
    Spec(#[from] EventSpecError),
    /// No PMU of this system (nor the architecture) names an event so.
    #[error("unknown Arm PMU event '{name}'")]
    Unknown {
        /// The name given.
        name: String,
        /// Every event name known here, for a "did you mean" hint.
        candidates: Vec<String>,
    },
    /// `PMU/EVENT/` names a PMU this system does not have.
    #[error("no Arm PMU named '{pmu}' here (this system's: {})", list(pmus))]
    NoSuchPmu {
        /// The PMU named.
        pmu: String,
        /// The PMUs this system has.
        pmus: Vec<String>,
    },
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// Why an event is not counted on one PMU, or at all: what was decided before opening, or the kernel's
/// refusal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventUnavailable {
    /// The system has no Arm PMU (another architecture, or a kernel without the Arm PMU driver).
    NoArmPmu,
    /// The core does not have it.
    NotOnPmu(NotOnPmu),
    /// A CPU-wide counting of a CPU whose PMU does not have it (the event is counted on other CPUs' cores).
    NotOnThisCpu,
    /// The kernel refused to open it on this PMU.
    Refused {
        /// The PMU.
        pmu: String,
        /// The kernel's answer.
        reason: super::UnavailableReason,
    },
}

impl fmt::Display for EventUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventUnavailable::NoArmPmu => f.write_str(
                "an Arm PMU event, and this system has no Arm CPU PMU (none in \
                 /sys/bus/event_source/devices)",
            ),
            EventUnavailable::NotOnPmu(why) => why.fmt(f),
            EventUnavailable::NotOnThisCpu => {
                f.write_str("not an event of this CPU's core type (other core types have it)")
            }
            EventUnavailable::Refused { pmu, reason } => write!(f, "{pmu}: {reason}"),
        }
    }
}

impl CpuPmus {
    /// Resolves `spec` against every PMU (or the one it names). A name no PMU and no architected event has
    /// is [`EventError::Unknown`]; a name or number some PMU lacks is resolved with that PMU's reason.
    pub fn resolve(&self, spec: &EventSpec) -> Result<PmuEvent, EventError> {
        let chosen: Vec<usize> = match &spec.pmu {
            None => (0..self.pmus().len()).collect(),
            Some(name) => match self.pmus().iter().position(|p| &p.name == name) {
                Some(i) => vec![i],
                None => {
                    return Err(EventError::NoSuchPmu {
                        pmu: name.clone(),
                        pmus: self.pmus().iter().map(|p| p.name.clone()).collect(),
                    })
                }
            },
        };
        let mut placements = Vec::with_capacity(chosen.len());
        let mut named: Option<(Option<String>, Option<String>)> = None;
        for i in chosen {
            let pmu = &self.pmus()[i];
            let code = match &spec.event {
                EventName::Number(code) => Some(*code),
                EventName::Name(name) => pmu.code_of(name),
            };
            let status = match code {
                Some(code) => pmu.check(code).map(|checked| (code, checked)),
                None => Err(NotOnPmu::UnknownName {
                    core: pmu.label().to_owned(),
                }),
            };
            if let (Some(code), None) = (code, &named) {
                named = Some(pmu.describe(code));
            }
            placements.push(Placement {
                pmu: i,
                pmu_name: pmu.name.clone(),
                label: pmu.label().to_owned(),
                perf_type: pmu.perf_type,
                cpus: pmu.cpus.clone(),
                counters: pmu.counters,
                status,
            });
        }
        let (name, description) = match (&spec.event, named) {
            (_, Some((Some(name), description))) => (name, description),
            (EventName::Number(code), _) => (format!("r{code:04x}"), None),
            (EventName::Name(name), Some((None, description))) => {
                (name.to_ascii_uppercase(), description)
            }
            (EventName::Name(name), None) => match architected_code(name) {
                // No PMU here (another architecture): an event the architecture names is still an
                // event, unavailable for want of a PMU.
                Some(code) => {
                    let event = pmu_regs::ArmEvent::from_code(code);
                    let description = match event {
                        Some(pmu_regs::ArmEvent::Common(e)) => Some(e.description().to_owned()),
                        _ => None,
                    };
                    (
                        event.map_or_else(|| name.to_ascii_uppercase(), |e| e.mnemonic().into()),
                        description,
                    )
                }
                None => {
                    return Err(EventError::Unknown {
                        name: name.clone(),
                        candidates: self.names(),
                    })
                }
            },
        };
        // An event of one PMU is named as perf names it (`armv8_cortex_a55/INST_RETIRED/`), apart from
        // the event of every PMU.
        let name = match &spec.pmu {
            Some(pmu) => format!("{pmu}/{name}/"),
            None => name,
        };
        Ok(PmuEvent {
            name,
            description,
            placements,
        })
    }

    /// Resolves every name of `names` (blank ones skipped), each event once (by its name and PMUs).
    pub fn resolve_all(&self, names: &[String]) -> Result<Vec<PmuEvent>, EventError> {
        let mut events: Vec<PmuEvent> = Vec::new();
        for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            let event = self.resolve(&name.parse()?)?;
            if !events.iter().any(|e| same_event(e, &event)) {
                events.push(event);
            }
        }
        Ok(events)
    }

    /// Every event name known here: the kernel's, Arm's lists', the architecture's.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = pmu_regs::CommonEvent::ALL
            .iter()
            .map(|e| e.mnemonic().to_owned())
            .chain(
                pmu_regs::RecommendedEvent::ALL
                    .iter()
                    .map(|e| e.mnemonic().to_owned()),
            )
            .collect();
        for pmu in self.pmus() {
            names.extend(pmu.kernel_events.iter().map(|(n, _)| n.clone()));
            if let Some(list) = &pmu.core_events {
                names.extend(list.iter().filter_map(|e| e.name.clone()));
            }
        }
        names.sort();
        names.dedup();
        names
    }
}

/// Whether two resolved events count the same thing on the same PMUs.
fn same_event(a: &PmuEvent, b: &PmuEvent) -> bool {
    a.name == b.name
        && a.placements.len() == b.placements.len()
        && a.placements
            .iter()
            .zip(&b.placements)
            .all(|(x, y)| x.pmu == y.pmu && x.status == y.status)
}

#[cfg(test)]
mod tests {
    use super::super::pmus::{CoreEvent, CpuPmu};
    use super::*;

    /// A big.LITTLE system: four Cortex-A55 and four Cortex-A76, each with a list of its own; the
    /// little cores have an IMPLEMENTATION DEFINED event the big ones do not (0xC0 on Cortex-A55).
    pub(crate) fn big_little() -> CpuPmus {
        let common = |extra: &[(&str, u16)]| {
            let mut events: Vec<(String, u16)> = [
                ("cpu_cycles", 0x11),
                ("inst_retired", 0x08),
                ("l2d_cache_refill", 0x17),
                ("stall_backend", 0x24),
            ]
            .iter()
            .chain(extra)
            .map(|&(n, c)| (n.to_owned(), c))
            .collect();
            events.sort();
            events
        };
        let list = |extra: Option<CoreEvent>| {
            let mut list = vec![
                CoreEvent {
                    code: 0x08,
                    name: Some("INST_RETIRED".into()),
                    description: "Instruction architecturally executed".into(),
                },
                CoreEvent {
                    code: 0x11,
                    name: Some("CPU_CYCLES".into()),
                    description: "Cycle".into(),
                },
                CoreEvent {
                    code: 0x17,
                    name: Some("L2D_CACHE_REFILL".into()),
                    description: "Level 2 data cache refill".into(),
                },
                CoreEvent {
                    code: 0x24,
                    name: Some("STALL_BACKEND".into()),
                    description: "Backend stall".into(),
                },
            ];
            list.extend(extra);
            list
        };
        CpuPmus::new(vec![
            CpuPmu {
                name: "armv8_cortex_a55".into(),
                perf_type: 8,
                cpus: vec![0, 1, 2, 3],
                midr: Some(0x412f_d050),
                core: Some("Cortex-A55".into()),
                kernel_events: common(&[]),
                core_events: Some(list(Some(CoreEvent {
                    code: 0xC0,
                    name: Some("L3D_CACHE_REFILL_PREFETCH".into()),
                    description: "Level 3 cache refill due to prefetch".into(),
                }))),
                counters: Some(6),
                slots: None,
            },
            CpuPmu {
                name: "armv8_cortex_a76".into(),
                perf_type: 9,
                cpus: vec![4, 5, 6, 7],
                midr: Some(0x414f_d0b0),
                core: Some("Cortex-A76".into()),
                kernel_events: common(&[("stall_frontend", 0x23)]),
                core_events: Some(list(None)),
                counters: Some(6),
                slots: None,
            },
        ])
    }

    fn resolve(pmus: &CpuPmus, text: &str) -> Result<PmuEvent, EventError> {
        pmus.resolve(&text.parse().unwrap())
    }

    #[test]
    fn a_mnemonic_a_kernel_name_and_a_number_are_the_same_event() {
        let pmus = big_little();
        let by_name = resolve(&pmus, "L2D_CACHE_REFILL").unwrap();
        assert_eq!(by_name.name, "L2D_CACHE_REFILL");
        assert_eq!(
            by_name.description.as_deref(),
            Some("Level 2 data cache refill")
        );
        for other in ["l2d_cache_refill", "0x17", "r17"] {
            assert_eq!(resolve(&pmus, other).unwrap(), by_name, "{other}");
        }
        type Status = Result<(u16, Checked), NotOnPmu>;
        let types: Vec<(u32, Status)> = by_name
            .placements
            .iter()
            .map(|p| (p.perf_type, p.status.clone()))
            .collect();
        assert_eq!(
            types,
            [
                (8, Ok((0x17, Checked::Pmceid))),
                (9, Ok((0x17, Checked::Pmceid)))
            ]
        );
        assert!(!by_name.is_partial());
    }

    #[test]
    fn an_event_of_one_cluster_says_so() {
        let pmus = big_little();
        let prefetch = resolve(&pmus, "L3D_CACHE_REFILL_PREFETCH").unwrap();
        assert!(prefetch.is_partial());
        assert_eq!(
            prefetch.placements[0].status,
            Ok((0xC0, Checked::EventList))
        );
        assert_eq!(
            prefetch.placements[1].status,
            Err(NotOnPmu::UnknownName {
                core: "Cortex-A76".into()
            })
        );
        // A common event only the big cores implement (PMCEID).
        let frontend = resolve(&pmus, "stall_frontend").unwrap();
        assert_eq!(
            frontend.placements[0].status,
            Err(NotOnPmu::NotImplemented {
                core: "Cortex-A55".into(),
                code: 0x23
            })
        );
        assert_eq!(frontend.placements[1].status, Ok((0x23, Checked::Pmceid)));
        // By number, the little cores' 0xC0 is not in the big cores' list.
        let raw = resolve(&pmus, "0xc0").unwrap();
        assert_eq!(raw.name, "L3D_CACHE_REFILL_PREFETCH");
        assert_eq!(
            raw.placements[1].status,
            Err(NotOnPmu::NotInEventList {
                core: "Cortex-A76".into(),
                code: 0xC0
            })
        );
    }

    #[test]
    fn one_pmu_by_perfs_spelling() {
        let pmus = big_little();
        let big = resolve(&pmus, "armv8_cortex_a76/inst_retired/").unwrap();
        assert_eq!(big.name, "armv8_cortex_a76/INST_RETIRED/");
        assert_eq!(big.placements.len(), 1);
        assert_eq!(big.placements[0].pmu_name, "armv8_cortex_a76");
        assert_eq!(
            resolve(&pmus, "armv8_cortex_x1/inst_retired/"),
            Err(EventError::NoSuchPmu {
                pmu: "armv8_cortex_x1".into(),
                pmus: vec!["armv8_cortex_a55".into(), "armv8_cortex_a76".into()]
            })
        );
    }

    #[test]
    fn an_unknown_name_is_an_error_with_candidates_and_a_known_one_without_pmu_is_unavailable() {
        let pmus = big_little();
        match resolve(&pmus, "L2D_CACHE_REFIL") {
            Err(EventError::Unknown { name, candidates }) => {
                assert_eq!(name, "L2D_CACHE_REFIL");
                assert!(candidates.iter().any(|c| c == "L2D_CACHE_REFILL"));
            }
            other => panic!("{other:?}"),
        }
        let none = CpuPmus::default();
        let event = resolve(&none, "stall_backend").unwrap();
        assert_eq!(event.name, "STALL_BACKEND");
        assert!(event.placements.is_empty() && !event.is_on_some_pmu());
        assert!(matches!(
            resolve(&none, "NOT_AN_EVENT"),
            Err(EventError::Unknown { .. })
        ));
        assert_eq!(resolve(&none, "r4005").unwrap().name, "r4005");
        assert_eq!(resolve(&none, "r4005").unwrap().unit(), crate::Unit::Events);
        assert_eq!(
            resolve(&pmus, "stall_backend").unwrap().unit(),
            crate::Unit::Cycles
        );
        assert!(EventUnavailable::NoArmPmu
            .to_string()
            .contains("no Arm CPU PMU"));
    }

    #[test]
    fn a_list_of_names_resolves_each_event_once() {
        let pmus = big_little();
        let names: Vec<String> = ["INST_RETIRED", " inst_retired ", "0x8", "", "CPU_CYCLES"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let events = pmus.resolve_all(&names).unwrap();
        assert_eq!(
            events.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            ["INST_RETIRED", "CPU_CYCLES"]
        );
        assert!(matches!(
            pmus.resolve_all(&["0xfffff".to_owned()]),
            Err(EventError::Spec(EventSpecError::NumberTooLarge { .. }))
        ));
    }
}
