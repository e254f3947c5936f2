//! The counter model: one description per counter, ids `1..=N` equal to positions.

use std::sync::Arc;

pub use crate::units::Units;

/// Identifier of a counter: its 1-based position in [`crate::Lizard::counters`].
///
/// Valid ids are `1..=N`; `0` is never valid. The id of a counter is always its position, for every source
/// (there is no separate "internal" id that could disagree with the position).
pub type CounterId = u32;

/// Where a counter's values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The gatord daemon (Arm Streamline), over TCP.
    Gatord,
    /// HWCPipe's CPU side (Linux `perf_event_open`).
    HwcPipeCpu,
    /// HWCPipe's GPU side (Mali kbase driver).
    HwcPipeGpu,
}

/// How the samples of a counter combine into one reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CounterClass {
    /// Each sample is the counter's level at that moment (memory in use, temperature): readings are the mean.
    Absolute,
    /// Each sample counts what happened since the previous sample: readings are the sum.
    Delta,
    /// A derived counter (Arm's Mali database: ratios, rates, constants and sums of other counters): each
    /// sample is its equation over that sample's interval, and a reading is its equation over the window's
    /// totals of its inputs ([`Counter::derivation`]) — neither a sum of samples nor their mean.
    Derived,
}

/// The numeric type a counter's readings naturally have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResultType {
    /// Whole numbers: read with [`crate::Lizard::read_int`].
    Integer,
    /// Fractional numbers: read with [`crate::Lizard::read_double`].
    Floating,
}

/// A programmable event of a CPU counter set (an Arm PMU's event counters): gatord counts it in one of the
/// set's slots (`ARMv8_Cortex_A72_cnt0` …), which the engine assigns when a capture starts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SetEvent {
    /// The counter set, as the events document names it (`ARMv8_Cortex_A72_cnt`).
    pub set: String,
    /// The event number programmed into the slot (`0x08`, INST_RETIRED).
    pub code: u64,
}

impl SetEvent {
    /// The set's name without its `_cnt` suffix: the prefix its fixed counters share
    /// (`ARMv8_Cortex_A72`, as in `ARMv8_Cortex_A72_ccnt`).
    pub fn stem(&self) -> &str {
        self.set.strip_suffix("_cnt").unwrap_or(&self.set)
    }

    /// Arm's mnemonic of the event (`INST_RETIRED`), for the common events of an Armv8/Armv9 PMU (sets named
    /// `ARMv8…`/`ARMv9…`); `None` for other sets (interconnects, Armv7, other vendors), whose codes mean
    /// something else.
    pub fn mnemonic(&self) -> Option<&'static str> {
        if !(self.set.starts_with("ARMv8") || self.set.starts_with("ARMv9")) {
            return None;
        }
        let code = u16::try_from(self.code).ok()?;
        pmu_regs::CommonEvent::from_code(code).map(pmu_regs::CommonEvent::mnemonic)
    }

    /// The counter name (its [`Counter::key`]): `<stem>:<mnemonic>` (`ARMv8_Cortex_A72:INST_RETIRED`), or
    /// `<stem>:0x<code>` (`ARMv8_Cortex_A72:0x60`, `CCI_400:0x1f`) when the event has no common mnemonic.
    pub fn key(&self) -> String {
        match self.mnemonic() {
            Some(mnemonic) => format!("{}:{mnemonic}", self.stem()),
            None => format!("{}:{:#04x}", self.stem(), self.code),
        }
    }

    /// Whether `name` names this event: `<stem>:<mnemonic>` or `<stem>:<code>` with the code in hex (`0x8`,
    /// `0x08`), the stem also as the full set name (`ARMv8_Cortex_A72_cnt:0x08`); ASCII case is ignored.
    pub fn is_named(&self, name: &str) -> bool {
        let Some((stem, event)) = name.rsplit_once(':') else {
            return false;
        };
        let stem_matches =
            stem.eq_ignore_ascii_case(self.stem()) || stem.eq_ignore_ascii_case(&self.set);
        let event_matches = self
            .mnemonic()
            .is_some_and(|m| m.eq_ignore_ascii_case(event))
            || event
                .strip_prefix("0x")
                .or_else(|| event.strip_prefix("0X"))
                .and_then(|hex| u64::from_str_radix(hex, 16).ok())
                == Some(self.code);
        stem_matches && event_matches
    }
}

/// One CPU's series of a local counter counted per CPU (`--per-cpu`): each CPU's series is a counter of its
/// own, keyed `NAME@cpuN` for people to read and type; the counter and the CPU are kept here, so nothing
/// reads them back from the key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CpuSeries {
    /// The counter's name, the same for every CPU's series (`TaskClock`).
    pub counter: String,
    /// The CPU.
    pub cpu: u32,
}

/// One Arm PMU event's counter, counted by the local source beside HWCPipe's counters: the event, and
/// the core type whose part it is when the event is counted on several (`armv8_cortex_a55/INST_RETIRED/`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PmuPart {
    /// The event (`INST_RETIRED`).
    pub event: String,
    /// The PMU of one core type (`armv8_cortex_a55`), for that core type's part; `None` for the event summed
    /// over every core type that counts it.
    pub pmu: Option<String>,
    /// That core type, as people name it (`Cortex-A55`).
    pub core: Option<String>,
}

/// What a counter's values count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The whole system: gatord's counters.
    System,
    /// The whole GPU: its counters do not follow a process.
    Gpu,
    /// The local CPU counters: what they were opened for.
    Cpus(CpuScope),
}

/// What the local CPU counters count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuScope {
    /// The calling process, through HWCPipe in this process (the C API's pattern).
    ThisProcess,
    /// A command and its children, another process, or CPUs.
    Target(hwcpipe::counting::Target),
}

impl CpuScope {
    /// As people read it: `this process`, `process 42, all threads`, `system-wide, 8 CPUs, summed`.
    pub fn text(&self) -> String {
        match self {
            CpuScope::ThisProcess => "this process".to_owned(),
            CpuScope::Target(target) => target.scope(),
        }
    }
}

impl Scope {
    /// The scope as the capture document writes it: `system`, `gpu`, or what the CPU counters count.
    pub fn name(&self) -> std::borrow::Cow<'static, str> {
        match self {
            Scope::System => "system".into(),
            Scope::Gpu => "gpu".into(),
            Scope::Cpus(what) => what.text().into(),
        }
    }
}

/// The description of one counter.
#[derive(Debug, Clone, PartialEq)]
pub struct Counter {
    /// The counter's id, equal to its 1-based position in the counter list.
    pub id: CounterId,
    /// The gatord counter name (`ARM_Mali-G71_GPU_ACTIVE`, `Linux_meminfo_memfree`); the HWCPipe counter name
    /// (`GpuCycles`) for HWCPipe counters.
    pub key: String,
    /// The event's `name` (gatord) or the HWCPipe counter name.
    pub name: String,
    /// The event's `title` (gatord), or [`crate::hwc::CPU_TITLE`] (`HWCPipe CPU (this process)`: these count
    /// only the calling process) / [`crate::hwc::GPU_TITLE`] (`HWCPipe GPU`).
    pub title: String,
    /// A sentence describing the counter.
    pub description: String,
    /// The category the counter is listed under.
    pub category: String,
    /// Factor every value is multiplied by when read (gatord `multiplier`; 1 when absent).
    pub multiplier: f64,
    /// The unit of the readings.
    pub units: Units,
    /// How samples combine into a reading.
    pub class: CounterClass,
    /// Where the values come from.
    pub source: Source,
    /// What the values count.
    pub scope: Scope,
    /// The natural numeric type of the readings.
    pub result_type: ResultType,
    /// For a programmable event of a counter set, the set and the event number; `None` for every other
    /// counter (a fixed gatord counter, HWCPipe).
    pub set_event: Option<SetEvent>,
    /// For a [`CounterClass::Derived`] counter, how it is computed from other counters; `None` otherwise.
    pub derivation: Option<Arc<Derivation>>,
    /// For one CPU's series of a local counter counted per CPU, the counter and the CPU; `None` for every
    /// other counter.
    pub cpu_series: Option<CpuSeries>,
    /// For an Arm PMU event counted by the local source, the event and the core type of its part.
    pub pmu_part: Option<PmuPart>,
}

/// How a derived counter is computed: an equation over other counters' totals and device constants.
#[derive(Debug, Clone, PartialEq)]
pub struct Derivation {
    /// The equation, its input `n` being `inputs[n]`.
    pub equation: hwcpipe::gpu::Expr,
    /// What each input of the equation is.
    pub inputs: Vec<DerivedInput>,
    /// Each input's name (a counter's key, a constant's name), for saying which divisor was 0.
    pub names: Vec<String>,
}

impl Derivation {
    /// Adds `offset` to every counter input (a list of counters placed after `offset` others).
    pub fn offset_counters(&mut self, offset: u32) {
        for input in &mut self.inputs {
            if let DerivedInput::Counter(n) = input {
                *n += offset;
            }
        }
    }

    /// `expr`, the equation or a part of it, as text with its inputs' names.
    pub fn render(&self, expr: &hwcpipe::gpu::Expr) -> String {
        expr.render(&|n| self.names.get(n).map_or("?", String::as_str).to_owned())
    }
}

/// One input of a [`Derivation`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DerivedInput {
    /// Another counter's total over the window (itself derived or not). A backend's counter list names it
    /// by its index in that list; the engine's, by its id.
    Counter(CounterId),
    /// A device constant.
    Constant(f64),
    /// The seconds the window (or sample) covers.
    TimeSpan,
}

impl Counter {
    /// A delta counter of gatord's with `id` and `key` and nothing else (no name, unit, multiplier or
    /// derivation): a base to set the fields a caller needs on, as
    /// `Counter { units, ..Counter::gatord_delta(id, key) }`.
    pub fn gatord_delta(id: CounterId, key: impl Into<String>) -> Counter {
        Counter {
            id,
            key: key.into(),
            name: String::new(),
            title: String::new(),
            description: String::new(),
            category: String::new(),
            multiplier: 1.0,
            units: Units::Unknown,
            class: CounterClass::Delta,
            source: Source::Gatord,
            scope: Scope::System,
            result_type: ResultType::Integer,
            set_event: None,
            derivation: None,
            cpu_series: None,
            pmu_part: None,
        }
    }

    /// The combined scale applied to every reading: the multiplier times the unit scale (MHz → Hz).
    pub fn scale(&self) -> f64 {
        self.multiplier * self.units.scale()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_events_are_named_by_stem_and_mnemonic_or_code() {
        let a72 = SetEvent {
            set: "ARMv8_Cortex_A72_cnt".into(),
            code: 0x08,
        };
        assert_eq!(a72.stem(), "ARMv8_Cortex_A72");
        assert_eq!(a72.key(), "ARMv8_Cortex_A72:INST_RETIRED");
        for name in [
            "ARMv8_Cortex_A72:INST_RETIRED",
            "armv8_cortex_a72:inst_retired",
            "ARMv8_Cortex_A72:0x8",
            "ARMv8_Cortex_A72:0x08",
            "ARMv8_Cortex_A72_cnt:0x08",
        ] {
            assert!(a72.is_named(name), "{name}");
        }
        for name in [
            "ARMv8_Cortex_A72",
            "ARMv8_Cortex_A72:8",
            "ARMv8_Cortex_A72:0x11",
            "ARMv8_Cortex_A53:INST_RETIRED",
            "ARMv8_Cortex_A72:CPU_CYCLES",
            "ARMv8_Cortex_A72:0xzz",
        ] {
            assert!(!a72.is_named(name), "{name}");
        }
        let impl_defined = SetEvent {
            set: "ARMv8_Cortex_A72_cnt".into(),
            code: 0x60,
        };
        assert_eq!(impl_defined.key(), "ARMv8_Cortex_A72:0x60");
        // An interconnect's event 0x08 is not INST_RETIRED.
        let cci = SetEvent {
            set: "CCI_400_cnt".into(),
            code: 0x08,
        };
        assert_eq!(cci.mnemonic(), None);
        assert_eq!(cci.key(), "CCI_400:0x08");
        assert!(!cci.is_named("CCI_400:INST_RETIRED"));
    }
}
