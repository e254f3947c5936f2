//! A simulated gatord: a real TCP server on loopback that speaks the gatord protocol through `gator-proto`'s
//! daemon state machine, for tests, benches, the C API's tests and the `lizard gatord-sim` command.
//!
//! It models the parts of gatord a client relies on:
//! - one thread per connection; the handshake answer `GATOR <protocol>`; PING answered with ACK;
//! - `events` (given text or [`DEFAULT_EVENTS_XML`]), `counters`, `captured` and `configuration` documents;
//!   unknown requests (and, at protocol ≥ 910, requests without an XML declaration) refused with
//!   "Unknown request";
//! - a delivered `<configurations>` document is saved across connections, and keys (even, from 4, in
//!   counter-list order) are bound when a connection starts — so, as with gatord, counters configured on the
//!   capture connection itself appear in `captured` with key `0x0` and get no data;
//! - one session at a time: a connection made while another is open gets "Session already in progress";
//! - after APC_START a SUMMARY frame (3 clocks at protocol 670, 4 from 910), then BLOCK_COUNTER (or COUNTER)
//!   frames as [`Stream`] says; APC_STOP ends with the zero-length APC_DATA and a close;
//! - perf-backed counters ([`SimConfig::perf_counters`], [`SimConfig::counting_only_counters`]) as gatord
//!   9.7.2 sends them: PERF_ATTRS attributes before the SUMMARY, the perf id map after it, and per sample one
//!   PERF_DATA frame per core whose sample record's group read carries the running totals;
//! - programmable counter sets as gatord offers a CPU's PMU: the counters document lists every slot of a set
//!   that a category uses (`Sim_cnt0`, `Sim_cnt1`), a delivered slot's `event=` is saved with it and echoed in
//!   `captured`, and a slot programmed with an event is served as a perf-backed counter growing per core by
//!   [`synthetic_event_value`] of its event (a slot delivered without an event gets no key);
//! - [`Faults`]: die mid-capture, never send the end marker, a malformed frame, an oversize length, busy;
//! - [`Timing`]: by default the real daemon's latencies (handshake, XML replies, stop, releasing a session)
//!   and pace (polled counters every 100 ms, perf counters at the session's `sample_rate`, frames reaching the
//!   socket every `live_rate`); [`SimConfig::quick`] takes no time, for protocol tests.
//!
//! ```
//! use lizard_core::sim::{self, SimConfig};
//! use lizard_core::{Config, Lizard};
//!
//! let daemon = sim::start(SimConfig::default()).unwrap();
//! let mut lizard = Lizard::configure(Config::gatord_only(daemon.address())).unwrap();
//! assert_eq!(lizard.counters()[0].key, "Sim_ccnt");
//! lizard.enable(1).unwrap();
//! lizard.start_capture().unwrap();
//! std::thread::sleep(std::time::Duration::from_millis(250));
//! lizard.stop_capture().unwrap();
//! assert!(lizard.read_int(1).unwrap() > 0);
//! daemon.shutdown();
//! ```

mod config;
mod connection;
mod documents;
pub(crate) mod perf;
mod server;
mod workload;

pub use config::{Faults, SimConfig, SimSample, Stream, Timing};
pub use server::{start, SimHandle, SimStats};
pub use workload::{synthetic_event_value, synthetic_value, DEFAULT_EVENTS_XML};
