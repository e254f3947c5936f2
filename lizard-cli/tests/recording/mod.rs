#![allow(dead_code)]

//! Recording what a gatord sends through a proxy, the profile that compares two such streams, and the two
//! fixed sessions the simulator is held to the real daemon with: `lizard capture` (gatord's default
//! `live_rate` of 100 ms) and the engine's per-draw mode (persistent, `live_rate` 1 ms), both of the same
//! three counters.

pub mod profile;
pub mod proxy;

use std::path::{Path, PathBuf};
use std::time::Duration;

use gatord_sim::{PerfLeader, SimConfig, Stream, Timing};
use lizard_core::{Config, Lizard};

use proxy::{Connection, Proxy};

/// The counters of the compared sessions: the Cortex-A72's cycle counter, one programmable event chosen
/// by name, and a polled block counter.
pub const COUNTERS: [&str; 3] = [
    "ARMv8_Cortex_A72_ccnt",
    "ARMv8_Cortex_A72:INST_RETIRED",
    "Linux_meminfo_memfree",
];

/// A fixed session, recorded against the real daemon and the simulator alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Session {
    /// `lizard capture --gatord … --no-hwcpipe --duration 3s --counters COUNTERS`.
    Capture,
    /// The engine in per-draw mode (what the C API uses): 20 Start/Stop/Read rounds of [`COUNTERS`].
    PerDraw,
}

impl Session {
    /// The sessions held to a committed profile. The per-draw session is not yet: against the real daemon
    /// its closing stop met gatord's "Perf agent failed. Invalid event and/or could not online CPUs".
    pub const ALL: [Session; 1] = [Session::Capture];

    /// The session's name in file names and messages.
    pub fn name(self) -> &'static str {
        match self {
            Session::Capture => "capture",
            Session::PerDraw => "per-draw",
        }
    }

    /// The real daemon's profile of this session, committed beside the tests (see `data/README.md`).
    pub fn committed_profile(self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
            "tests/data/gatord-9.7.2-arm64-vm-{}.profile",
            self.name()
        ))
    }

    /// Runs the session against the daemon at `upstream` through a recording proxy and returns the
    /// connection that captured.
    pub fn record(self, upstream: std::net::SocketAddr) -> Connection {
        let proxy = Proxy::start(upstream);
        match self {
            Session::Capture => {
                let counters = COUNTERS.join(",");
                let out = crate::common::lizard(&crate::common::gatord_capture(
                    &proxy.address(),
                    "3s",
                    &["--counters", &counters, "--format", "json"],
                ));
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            Session::PerDraw => per_draw_rounds(&proxy.address()),
        }
        proxy
            .finish()
            .into_iter()
            .find(Connection::started_a_capture)
            .expect("a connection that started a capture")
    }
}

/// 20 per-draw rounds of [`COUNTERS`] against the daemon at `address`: start, 2 ms of work, stop, read each.
fn per_draw_rounds(address: &str) {
    let mut config = Config::per_draw(address.parse::<std::net::SocketAddr>().expect("address"));
    config.hwcpipe = false;
    let mut lizard = Lizard::configure(config).expect("per-draw engine");
    for name in COUNTERS {
        let id = lizard
            .counters()
            .iter()
            .find(|c| c.key == name)
            .unwrap_or_else(|| panic!("the daemon lists no {name}"))
            .id;
        lizard.enable(id).expect("enable");
    }
    for _ in 0..20 {
        lizard.start_capture().expect("start");
        std::thread::sleep(Duration::from_millis(2));
        lizard.stop_capture().expect("stop");
        for c in 1..=lizard.count() as u32 {
            let _ = lizard.read_double(c);
        }
    }
    lizard.close_session().expect("close the session");
}

/// The simulator set up as the real gatord 9.7.2 in the emulated Arm system (one Cortex-A72, the Arm
/// VM's events document, tracefs mounted): the cycle counter and the first programmable slot served as
/// perf counters, polled counters every 100 ms, the real daemon's timing with perf data starting as late
/// as it did there. `None` (a printed skip) without the recorded events document.
pub fn simulated_arm_vm_daemon() -> Option<SimConfig> {
    let events = test_data::gatord_text("arm64-vm-local.apc/events.xml")?;
    Some(SimConfig {
        events_xml: Some(events),
        perf_counters: vec![
            "ARMv8_Cortex_A72_ccnt".into(),
            "ARMv8_Cortex_A72_cnt0".into(),
        ],
        perf_leader: PerfLeader::SchedSwitch {
            tracepoint: ARM_VM_SCHED_SWITCH,
        },
        cores: 1,
        stream: Stream::Synthetic {
            period: Duration::from_millis(100),
        },
        timing: Timing {
            perf_start: Duration::from_millis(240),
            ..Timing::default()
        },
        ..SimConfig::quick()
    })
}

/// The id of the `sched:sched_switch` tracepoint in the Arm VM's 6.1 kernel (its tracefs `id` file).
pub const ARM_VM_SCHED_SWITCH: u64 = 0x108;
