//! A counter's Prometheus metric name and base unit: `TaskClock` in ns becomes `lizard_task_clock_seconds`
//! with its values scaled by 1e-9, as the Prometheus and OpenMetrics naming conventions ask (base units,
//! the unit as the name's suffix, snake case, one namespace prefix).

use lizard_core::counter::Units;

/// The prefix of every metric the exporter writes.
pub const NAMESPACE: &str = "lizard";

/// How a counter's readings are named and scaled for the exposition.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricName {
    /// The metric name without the `_total` of a counter (`lizard_task_clock_seconds`).
    pub name: String,
    /// The base unit that ends the name (`seconds`, `bytes`, …), if the counter's unit has one.
    pub unit: Option<&'static str>,
    /// What a reading is multiplied by to be in `unit` (1e-9 for nanoseconds).
    pub factor: f64,
}

impl MetricName {
    /// The name and base unit of the counter `key` whose readings are in `units`.
    pub fn new(key: &str, units: &Units) -> MetricName {
        let (unit, factor) = base_unit(units);
        let mut name = format!("{NAMESPACE}_{}", snake_case(key));
        if let Some(unit) = unit {
            if !name.ends_with(&format!("_{unit}")) {
                name.push('_');
                name.push_str(unit);
            }
        }
        MetricName { name, unit, factor }
    }
}

/// The base unit of readings in `units`, and the factor to it. Units without a base unit of the
/// conventions (counts of events, pages, switches) have none: the name carries no unit.
fn base_unit(units: &Units) -> (Option<&'static str>, f64) {
    match units {
        Units::Bytes => (Some("bytes"), 1.0),
        Units::Celsius => (Some("celsius"), 1.0),
        // Readings in MHz are already scaled to Hz (`Units::scale`).
        Units::Hertz | Units::Megahertz => (Some("hertz"), 1.0),
        Units::Seconds => (Some("seconds"), 1.0),
        Units::Volts => (Some("volts"), 1.0),
        Units::Millivolts => (Some("volts"), 1e-3),
        Units::Other(text) => match text.trim() {
            "ns" => (Some("seconds"), 1e-9),
            "us" | "µs" => (Some("seconds"), 1e-6),
            "ms" => (Some("seconds"), 1e-3),
            "s" => (Some("seconds"), 1.0),
            "B" | "byte" | "bytes" => (Some("bytes"), 1.0),
            "W" => (Some("watts"), 1.0),
            "mW" => (Some("watts"), 1e-3),
            "uW" | "µW" => (Some("watts"), 1e-6),
            "J" => (Some("joules"), 1.0),
            "mJ" => (Some("joules"), 1e-3),
            "A" => (Some("amperes"), 1.0),
            "mA" => (Some("amperes"), 1e-3),
            // The conventions give fractions as ratios, 0 to 1.
            "%" => (Some("ratio"), 1e-2),
            _ => (None, 1.0),
        },
        Units::Unknown | Units::Pages | Units::Rpm => (None, 1.0),
    }
}

/// `TaskClock` → `task_clock`, `ARMv8_Cortex_A72_ccnt` → `armv8_cortex_a72_ccnt`, `Linux_meminfo_memfree` as
/// it is but lower case: a `_` before an upper-case letter that follows a lower-case one, every character
/// outside `[a-z0-9_]` a `_`, runs of `_` folded, none at either end.
pub fn snake_case(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    let mut previous_lower = false;
    for c in key.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            out.push('_');
        }
        previous_lower = c.is_ascii_lowercase();
        let c = c.to_ascii_lowercase();
        let c = if c.is_ascii_alphanumeric() { c } else { '_' };
        if !(c == '_' && (out.is_empty() || out.ends_with('_'))) {
            out.push(c);
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "counter_");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_snake_case_names() {
        assert_eq!(snake_case("TaskClock"), "task_clock");
        assert_eq!(snake_case("ARMv8_Cortex_A72_ccnt"), "armv8_cortex_a72_ccnt");
        assert_eq!(
            snake_case("ARMv8_Cortex_A72:INST_RETIRED"),
            "armv8_cortex_a72_inst_retired"
        );
        assert_eq!(snake_case("Linux_meminfo_memfree"), "linux_meminfo_memfree");
        assert_eq!(
            snake_case("ARM_Mali-G71_GPU_ACTIVE"),
            "arm_mali_g71_gpu_active"
        );
        assert_eq!(snake_case("__a  b__"), "a_b");
        assert_eq!(snake_case("3d"), "counter_3d");
        assert_eq!(snake_case("µ"), "counter_");
        assert_eq!(snake_case(""), "counter_");
    }

    #[test]
    fn units_become_base_units_in_the_name() {
        let ns = MetricName::new("TaskClock", &Units::Other("ns".into()));
        assert_eq!(ns.name, "lizard_task_clock_seconds");
        assert_eq!((ns.unit, ns.factor), (Some("seconds"), 1e-9));
        let mv = MetricName::new("Vdd", &Units::Millivolts);
        assert_eq!((mv.name.as_str(), mv.factor), ("lizard_vdd_volts", 1e-3));
        let bytes = MetricName::new("Linux_meminfo_memfree_bytes", &Units::Bytes);
        assert_eq!(bytes.name, "lizard_linux_meminfo_memfree_bytes");
        let power = MetricName::new("Sim_power", &Units::Other("W".into()));
        assert_eq!(
            (power.name.as_str(), power.factor),
            ("lizard_sim_power_watts", 1.0)
        );
        let busy = MetricName::new("GPU_busy", &Units::Other("%".into()));
        assert_eq!(
            (busy.name.as_str(), busy.factor),
            ("lizard_gpu_busy_ratio", 1e-2)
        );
        let count = MetricName::new("ContextSwitches", &Units::Other("switches".into()));
        assert_eq!(
            (count.name.as_str(), count.unit),
            ("lizard_context_switches", None)
        );
    }
}
