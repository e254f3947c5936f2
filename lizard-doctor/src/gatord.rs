//! gatord: reachable, the protocol version it speaks, busy with another session or not, and how many counters
//! it offers.

use lizard_core::{gatord_offer, Error, GatordAddress, GatordError, Timeouts, TransportError};

use crate::{Check, SourceKind, SourceReport, Status};

/// The longest a gatord message may be (its events document is about 3 MB).
const MAX_MESSAGE: u32 = 16 << 20;

/// Checks gatord at `address`.
pub fn gatord(address: &GatordAddress, timeouts: Timeouts) -> SourceReport {
    let name = format!("gatord at {address}");
    // No retry while busy: a busy daemon is a finding.
    let check = match gatord_offer(address, timeouts, MAX_MESSAGE) {
        Ok(found) => {
            let enabled = found.counters.len() - found.derived.len();
            Check::new(
                name,
                if found.counters.is_empty() {
                    Status::Failed
                } else {
                    Status::Ok
                },
                format!(
                    "protocol {}, {} counters offered ({enabled} delivered, {} derived by Streamline only)",
                    found.version,
                    found.counters.len(),
                    found.derived.len()
                ),
            )
        }
        Err(err) => failure(name, address, &err),
    };
    SourceReport::new(SourceKind::Gatord, vec![check])
}

/// What a failed discovery means.
fn failure(name: String, address: &GatordAddress, err: &Error) -> Check {
    let text = lizard_core::error_chain(err);
    let check = Check::new(name, Status::Failed, text);
    match err {
        Error::Gatord(GatordError::SessionInProgress { .. }) => check
            .because("gatord is busy with another session (Streamline, or another lizard)")
            .fix("stop the other capture, then try again"),
        Error::Gatord(GatordError::Transport(TransportError::Connect { .. })) => check
            .because(format!("nothing accepts connections at {address}: gatord is not running or the port is not forwarded"))
            .fix(format!(
                "start gatord on the device (adb shell /data/local/tmp/gatord &) and forward its port (adb forward tcp:{port} tcp:{port})",
                port = address.port
            )),
        Error::Gatord(GatordError::Transport(TransportError::Timeout(..))) => check
            .because("gatord did not answer in time: another process holds the port, or the device is stalled"),
        _ => check,
    }
}
