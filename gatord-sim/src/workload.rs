//! The simulator's deterministic synthetic workload and its built-in events document.

/// The value the synthetic workload reports for the counter at `index` (its position in the capture's key map,
/// 0-based, in `captured` order) in sample number `sample` (0-based, counted from APC_START).
///
/// Deterministic, so a test can recompute every value it should read: `(index + 1) * 1000 + sample % 16`.
pub fn synthetic_value(index: usize, sample: u64) -> i64 {
    (index as i64 + 1) * 1000 + (sample % 16) as i64
}

/// The per-core increase the synthetic workload reports for a counter-set slot programmed with event `code`,
/// in sample number `sample` (0-based): it depends on the event, not on the slot, so a test can tell which
/// event the delivered configuration programmed: `(code + 1) * 100 000 + sample % 16`.
pub fn synthetic_event_value(code: u64, sample: u64) -> i64 {
    i64::try_from(code)
        .unwrap_or(i64::MAX)
        .saturating_add(1)
        .saturating_mul(100_000)
        .saturating_add((sample % 16) as i64)
}

/// The built-in events document: a few counters covering delta and absolute classes, a multiplier, MHz units
/// and a unit the engine keeps as text.
pub const DEFAULT_EVENTS_XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<events>
  <counter_set name="Sim_cnt" count="2"/>
  <category name="Sim CPU" counter_set="Sim_cnt" per_cpu="yes">
    <event counter="Sim_ccnt" event="0x11" title="Sim CPU" name="Cycles" class="delta" units="cycles" description="Cycles counted by the simulated core"/>
    <event event="0x08" title="Sim CPU" name="Instructions" description="A programmable event (no fixed counter)"/>
    <event counter="Sim_instructions" title="Sim CPU" name="Instructions retired" units="instructions" description="Instructions retired by the simulated core"/>
  </category>
  <category name="Sim Memory">
    <event counter="Sim_memfree" title="Memory" name="Free" class="absolute" units="B" description="Free memory"/>
    <event counter="Sim_freq" title="Clock" name="Frequency" class="absolute" units="MHz" description="Core clock"/>
    <event counter="Sim_power" title="Power" name="Rail" class="absolute" units="W" multiplier="0.001" description="Power in milliwatts, reported in watts"/>
  </category>
</events>
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_is_deterministic_and_distinct_per_counter() {
        assert_eq!(synthetic_value(0, 0), 1000);
        assert_eq!(synthetic_value(1, 17), 2001);
        assert_ne!(synthetic_value(0, 3), synthetic_value(1, 3));
        assert_eq!(synthetic_event_value(0x08, 17), 900_001);
        assert_eq!(synthetic_event_value(u64::MAX, 0), i64::MAX);
    }

    #[test]
    fn default_events_document_parses() {
        let events = gator_xml::Events::parse(DEFAULT_EVENTS_XML).unwrap();
        assert_eq!(
            events.events().filter(|(_, e)| e.counter.is_some()).count(),
            5
        );
    }
}
