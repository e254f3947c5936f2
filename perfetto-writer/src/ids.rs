//! The ids of what a trace has written once and refers to since: tracks, interned names, categories and
//! argument names.

#[cfg(doc)]
use crate::TraceWriter;

/// A track of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TrackId(pub(crate) u64);

/// An interned event name ([`TraceWriter::intern_name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NameId(pub(crate) u64);

/// An interned category ([`TraceWriter::intern_category`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CategoryId(pub(crate) u64);

/// The interned name of an event's argument ([`TraceWriter::intern_arg`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArgId(pub(crate) u64);

/// An instant's or slice's name: interned, for a name many events share, or the text itself, for a name
/// of one event (a message's text), written with the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name<'a> {
    /// A name given by [`TraceWriter::intern_name`].
    Interned(NameId),
    /// The text.
    Text(&'a str),
}

impl From<NameId> for Name<'_> {
    fn from(id: NameId) -> Self {
        Name::Interned(id)
    }
}

impl<'a> From<&'a str> for Name<'a> {
    fn from(text: &'a str) -> Self {
        Name::Text(text)
    }
}
