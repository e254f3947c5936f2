//! The HTML report of a capture: one self-contained page (inline SVG charts, inline
//! style and script, no network) with a time-series chart per counter and the summary table.
//!
//! A report is always made from the capture document ([`Capture`](lizard_core::capture::Capture)): `lizard capture
//! --format html` renders the document it builds, and `lizard report FILE` the one `--format json` saved,
//! so both give the same page for the same capture.
//!
//! Every string that comes from a capture (counter names, units, descriptions, trace record modules and
//! files, warnings) is escaped as HTML (`escape.rs`); numbers are written by the report itself. The page
//! is laid out in `page.rs`, each counter's chart in `chart.rs`, the charts' scales in `axis.rs`.
//!
//! ```
//! use lizard_core::capture::Capture;
//! use lizard_render::report;
//!
//! let capture = Capture::from_json(
//!     r#"{"window_ns": [0, 2000000], "counters": [{"id": 1, "counter": "<Sim_ccnt>", "units": "cycles",
//!         "class": "delta", "value": 3, "samples": [[0, 1], [1000000, 1], [2000000, 1]]}]}"#,
//! )?;
//! let page = report::html(&capture);
//! assert!(page.starts_with("<!DOCTYPE html>"));
//! assert!(page.contains("&lt;Sim_ccnt&gt;") && !page.contains("<Sim_ccnt>"));
//! # Ok::<(), lizard_core::capture::DocumentError>(())
//! ```

mod axis;
mod chart;
mod escape;
mod page;

pub use page::html;
