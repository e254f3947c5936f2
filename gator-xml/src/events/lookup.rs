//! Finding events: by fixed counter name, by category, by counter set, and by programmable slot + event code.
//!
//! A fixed counter (`<event counter="ARMv8_Cortex_A53_ccnt" …>`) is found by its name. A programmable CPU PMU
//! event has no `counter` attribute; gatord exposes it through the slots of the category's counter set
//! (`ARMv8_Cortex_A53_cnt0` … `cnt5`) and the captured reply says which event code a slot was given. So a slot
//! name resolves through its counter set to the categories using that set, and the event code picks the event.

use super::{Category, CounterSet, Event, Events};
use std::collections::HashMap;

/// An event found by a lookup, with where it was found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolved<'e> {
    /// The category holding the event.
    pub category: &'e Category,
    /// The event.
    pub event: &'e Event,
    /// The counter set, when the name was a programmable slot.
    pub counter_set: Option<&'e CounterSet>,
    /// The slot index, when the name was a programmable slot.
    pub slot: Option<u32>,
}

impl Events {
    /// The counter set named `name`.
    pub fn counter_set(&self, name: &str) -> Option<&CounterSet> {
        self.counter_sets.iter().find(|s| s.name == name)
    }

    /// The categories named `name` (names repeat in merged documents).
    pub fn categories_named<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = &'a Category> + 'a {
        self.categories.iter().filter(move |c| c.name == name)
    }

    /// The events of every category named `category`.
    pub fn events_in_category<'a>(
        &'a self,
        category: &'a str,
    ) -> impl Iterator<Item = &'a Event> + 'a {
        self.categories_named(category)
            .flat_map(|c| c.events.iter())
    }

    /// The categories whose `counter_set` is `set`.
    pub fn categories_in_counter_set<'a>(
        &'a self,
        set: &'a str,
    ) -> impl Iterator<Item = &'a Category> + 'a {
        self.categories
            .iter()
            .filter(move |c| c.counter_set.as_deref() == Some(set))
    }

    /// The events of the categories using counter set `set`.
    pub fn events_in_counter_set<'a>(
        &'a self,
        set: &'a str,
    ) -> impl Iterator<Item = &'a Event> + 'a {
        self.categories_in_counter_set(set)
            .flat_map(|c| c.events.iter())
    }

    /// The counter set of which `counter` is a slot (`<set name><index>`), with the slot index.
    pub fn slot(&self, counter: &str) -> Option<(&CounterSet, u32)> {
        let stem = counter.trim_end_matches(|c: char| c.is_ascii_digit());
        let set = self.counter_set(stem)?;
        Some((set, set.slot_index(counter)?))
    }

    /// The first event whose `counter` attribute is `counter` (a fixed counter), with its category.
    pub fn event_by_counter(&self, counter: &str) -> Option<Resolved<'_>> {
        self.events()
            .find(|(_, e)| e.counter.as_deref() == Some(counter))
            .map(|(category, event)| Resolved {
                category,
                event,
                counter_set: None,
                slot: None,
            })
    }

    /// The first programmable event with code `code` in a category using counter set `set`.
    pub fn programmable_event(&self, set: &str, code: u64) -> Option<(&Category, &Event)> {
        self.categories
            .iter()
            .filter(|c| c.counter_set.as_deref() == Some(set))
            .find_map(|c| c.programmable_event(code).map(|e| (c, e)))
    }

    /// Resolves a counter name as gatord reports it (counters and captured replies) to its event.
    ///
    /// A fixed counter name resolves directly. A slot name (`ARMv8_Cortex_A53_cnt2`) needs the event code that
    /// was programmed into it (`event` of the captured counter); without a code a slot resolves to nothing.
    pub fn resolve(&self, counter: &str, event: Option<u64>) -> Option<Resolved<'_>> {
        if let Some(found) = self.event_by_counter(counter) {
            return Some(found);
        }
        let (set, slot) = self.slot(counter)?;
        let (category, event) = self.programmable_event(&set.name, event?)?;
        Some(Resolved {
            category,
            event,
            counter_set: Some(set),
            slot: Some(slot),
        })
    }

    /// Builds hash indexes for repeated lookups (same answers as [`Events::resolve`], in O(1)).
    pub fn index(&self) -> EventIndex<'_> {
        EventIndex::new(self)
    }
}

/// Hash indexes over an [`Events`] document; build once with [`Events::index`], then look up many names.
#[derive(Debug, Clone)]
pub struct EventIndex<'e> {
    events: &'e Events,
    by_counter: HashMap<&'e str, (usize, usize)>,
    by_code: HashMap<(&'e str, u64), (usize, usize)>,
    sets: HashMap<&'e str, &'e CounterSet>,
}

impl<'e> EventIndex<'e> {
    fn new(events: &'e Events) -> Self {
        let mut by_counter = HashMap::new();
        let mut by_code = HashMap::new();
        for (ci, c) in events.categories.iter().enumerate() {
            for (ei, e) in c.events.iter().enumerate() {
                match (&e.counter, &c.counter_set, e.event) {
                    (Some(name), _, _) => {
                        by_counter.entry(name.as_str()).or_insert((ci, ei));
                    }
                    (None, Some(set), Some(code)) => {
                        by_code.entry((set.as_str(), code)).or_insert((ci, ei));
                    }
                    _ => {}
                }
            }
        }
        let mut sets = HashMap::new();
        for s in &events.counter_sets {
            sets.entry(s.name.as_str()).or_insert(s);
        }
        Self {
            events,
            by_counter,
            by_code,
            sets,
        }
    }

    fn at(&self, (ci, ei): (usize, usize)) -> (&'e Category, &'e Event) {
        let c = &self.events.categories[ci];
        (c, &c.events[ei])
    }

    /// The document this index was built over.
    pub fn events(&self) -> &'e Events {
        self.events
    }

    /// Same as [`Events::event_by_counter`].
    pub fn event_by_counter(&self, counter: &str) -> Option<Resolved<'e>> {
        let (category, event) = self.at(*self.by_counter.get(counter)?);
        Some(Resolved {
            category,
            event,
            counter_set: None,
            slot: None,
        })
    }

    /// Same as [`Events::resolve`].
    pub fn resolve(&self, counter: &str, event: Option<u64>) -> Option<Resolved<'e>> {
        if let Some(found) = self.event_by_counter(counter) {
            return Some(found);
        }
        let stem = counter.trim_end_matches(|c: char| c.is_ascii_digit());
        let set = *self.sets.get(stem)?;
        let slot = set.slot_index(counter)?;
        let (category, event) = self.at(*self.by_code.get(&(set.name.as_str(), event?))?);
        Some(Resolved {
            category,
            event,
            counter_set: Some(set),
            slot: Some(slot),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"<events>
<counter_set name="A53_cnt" count="6"/>
<category name="Cortex-A53" counter_set="A53_cnt" per_cpu="yes">
  <event counter="A53_ccnt" event="0x11" title="Cycles" name="CPU Cycles"/>
  <event event="0x08" title="Instructions" name="Executed"/>
  <event event="0x03" title="Cache" name="Refill"/>
</category>
<category name="Linux">
  <event counter="Linux_meminfo_memfree" title="Memory" name="Free" class="absolute" units="B"/>
</category>
</events>"#;

    #[test]
    fn fixed_counters_resolve_by_name() {
        let ev = Events::parse(DOC).unwrap();
        let r = ev.resolve("Linux_meminfo_memfree", None).unwrap();
        assert_eq!(r.category.name, "Linux");
        assert_eq!(r.event.name, "Free");
        assert_eq!(r.slot, None);
        assert_eq!(ev.index().resolve("Linux_meminfo_memfree", None), Some(r));
    }

    #[test]
    fn slots_resolve_through_their_counter_set_and_event_code() {
        let ev = Events::parse(DOC).unwrap();
        let idx = ev.index();
        let r = ev.resolve("A53_cnt2", Some(0x8)).unwrap();
        assert_eq!(r.event.name, "Executed");
        assert_eq!(r.slot, Some(2));
        assert_eq!(r.counter_set.unwrap().name, "A53_cnt");
        assert_eq!(idx.resolve("A53_cnt2", Some(0x8)), Some(r));
        // No code, unknown code, slot beyond count, unknown set: nothing.
        for (name, code) in [
            ("A53_cnt2", None),
            ("A53_cnt2", Some(0x99)),
            ("A53_cnt6", Some(0x8)),
            ("B_cnt0", Some(0x8)),
        ] {
            assert!(ev.resolve(name, code).is_none(), "{name}");
            assert!(idx.resolve(name, code).is_none(), "{name}");
        }
    }

    #[test]
    fn category_and_counter_set_lookups() {
        let ev = Events::parse(DOC).unwrap();
        assert_eq!(ev.events_in_category("Cortex-A53").count(), 3);
        assert_eq!(ev.events_in_counter_set("A53_cnt").count(), 3);
        assert_eq!(ev.categories_named("Nope").count(), 0);
        assert_eq!(ev.counter_set("A53_cnt").unwrap().count, 6);
        assert_eq!(ev.slot("A53_cnt5").map(|(_, i)| i), Some(5));
    }
}
