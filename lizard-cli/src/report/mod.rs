//! The HTML report of a capture: one self-contained page (inline SVG charts, inline style and script, no
//! network) with a time-series chart per counter and the summary table.
//!
//! A report is always made from the capture document ([`lizard_core::capture::Capture`]): `lizard
//! capture --format html` renders the document it builds, and `lizard report FILE` the one `--format json`
//! saved, so both give the same page for the same capture.
//!
//! Every string that comes from a capture (counter names, units, descriptions, trace record modules and
//! files, warnings) goes through [`escape::Esc`]; numbers are written by the report itself.

mod axis;
mod chart;
mod escape;
mod page;

pub use page::html;
