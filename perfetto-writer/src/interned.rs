//! The strings a trace interns: each written once, in the first packet that uses it.

use std::collections::HashMap;

use crate::event::put_interned;

/// `InternedData.event_categories`.
pub(crate) const CATEGORIES: u8 = 1;
/// `InternedData.event_names`.
pub(crate) const NAMES: u8 = 2;
/// `InternedData.debug_annotation_names`.
pub(crate) const ARG_NAMES: u8 = 3;

/// The strings of one kind given ids (1, 2, …), and whether each was written yet.
#[derive(Debug, Default)]
pub(crate) struct Interned {
    ids: HashMap<String, u64>,
    /// By id − 1: the string and whether a packet defined it.
    strings: Vec<(String, bool)>,
}

impl Interned {
    pub(crate) fn intern(&mut self, text: &str) -> u64 {
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        self.strings.push((text.to_owned(), false));
        let id = self.strings.len() as u64;
        self.ids.insert(text.to_owned(), id);
        id
    }

    /// Appends `id`'s definition to `interned` (as `InternedData` field `field`) unless a packet has it.
    #[inline]
    pub(crate) fn send(&mut self, field: u8, id: u64, interned: &mut Vec<u8>) {
        let (text, sent) = &mut self.strings[(id - 1) as usize];
        if !*sent {
            *sent = true;
            put_interned(interned, field, id, text);
        }
    }
}
