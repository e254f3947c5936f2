//! [`CounterSet`]: a `<counter_set name count/>`, a bank of programmable counter slots.

use crate::error::XmlError;
use crate::reader::Element;
use crate::Attributes;

/// `<counter_set name="X_cnt" count="N"/>`: N programmable slots named `X_cnt0` … `X_cnt{N-1}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterSet {
    /// The set name, e.g. `ARMv8_Cortex_A53_cnt`.
    pub name: String,
    /// The number of programmable slots.
    pub count: u32,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

impl CounterSet {
    /// The slot names `<name>0` … `<name>{count-1}`, which is what gatord lists in its counters reply.
    pub fn slot_names(&self) -> impl Iterator<Item = String> + '_ {
        (0..self.count).map(move |i| format!("{}{i}", self.name))
    }

    /// The slot index when `counter` names one of this set's slots (`<name><index>`, index < count).
    pub fn slot_index(&self, counter: &str) -> Option<u32> {
        let digits = counter.strip_prefix(self.name.as_str())?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse::<u32>().ok().filter(|&i| i < self.count)
    }

    pub(crate) fn read(el: Element<'_, '_>) -> Result<Self, XmlError> {
        let ([name, count], extra) = el.known(["name", "count"]);
        let count = el.int_value("count", count.ok_or_else(|| el.missing("count"))?)?;
        Ok(Self {
            name: name.ok_or_else(|| el.missing("name"))?.to_owned(),
            count,
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set() -> CounterSet {
        CounterSet {
            name: "ARMv8_Cortex_A53_cnt".into(),
            count: 6,
            extra: Attributes::new(),
        }
    }

    #[test]
    fn slot_names_follow_the_set_name() {
        let names: Vec<String> = set().slot_names().collect();
        assert_eq!(names.len(), 6);
        assert_eq!(names[0], "ARMv8_Cortex_A53_cnt0");
        assert_eq!(names[5], "ARMv8_Cortex_A53_cnt5");
    }

    #[test]
    fn slot_index_accepts_only_slots_of_this_set() {
        let s = set();
        assert_eq!(s.slot_index("ARMv8_Cortex_A53_cnt3"), Some(3));
        assert_eq!(s.slot_index("ARMv8_Cortex_A53_cnt6"), None);
        assert_eq!(s.slot_index("ARMv8_Cortex_A53_cnt"), None);
        assert_eq!(s.slot_index("ARMv8_Cortex_A53_cntx"), None);
        assert_eq!(s.slot_index("ARMv8_Cortex_A53_ccnt"), None);
        assert_eq!(s.slot_index("ARMv8_Cortex_A53_cnt99999999999"), None);
    }
}
