//! The kinds of input file and the size each may have.

use std::fmt;

/// What a file given to a command is read as; each kind has its own size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputKind {
    /// A capture's JSON document (`lizard capture --format json`), read by `report`, `diff` and
    /// `lizard_rs.load`.
    CaptureDocument,
    /// A gatord events XML document or fragment (`events`, `gatord-sim --events`, a capture's `events.xml`).
    EventsXml,
    /// A local capture's `captured.xml`.
    CapturedXml,
    /// A local capture's frame file (`0000000000`), decoded as it is read.
    FrameFile,
    /// An STM trace stream decoded as it is read (`stm-dump`, `stm-report` of a dump in order).
    TraceStream,
    /// An STM trace buffer read whole (`stm-report --wrapped` or `--write-pointer`).
    TraceBuffer,
    /// A target's ELF image (`stm-report --elf`).
    Elf,
    /// A small text table: a dictionary, a CP Tracer layout, a `.dcm` sidecar.
    TextTable,
    /// A trace ring file (`trace-dump`, `trace-server --load`), decoded as it is read.
    RingFile,
}

impl InputKind {
    /// Every kind, in the order the documentation lists them.
    pub const ALL: [InputKind; 9] = [
        InputKind::CaptureDocument,
        InputKind::EventsXml,
        InputKind::CapturedXml,
        InputKind::FrameFile,
        InputKind::TraceStream,
        InputKind::TraceBuffer,
        InputKind::Elf,
        InputKind::TextTable,
        InputKind::RingFile,
    ];

    /// The most bytes a file of this kind may have unless the limit is raised.
    ///
    /// Inputs read whole cost their size in memory, so their limits sit well above the largest real file
    /// of the kind (gatord's merged events document is 3 MB; a one-hour capture of 30 counters at 10 ms is
    /// about 200 MB of JSON) and well below what a machine has. Streamed inputs cost constant memory; their
    /// limit bounds the time a wrong file (`/dev/zero`) can take.
    pub const fn default_limit(self) -> u64 {
        const MIB: u64 = 1 << 20;
        const GIB: u64 = 1 << 30;
        match self {
            InputKind::CaptureDocument => 512 * MIB,
            InputKind::EventsXml => 64 * MIB,
            InputKind::CapturedXml => 16 * MIB,
            InputKind::FrameFile => 64 * GIB,
            InputKind::TraceStream => 64 * GIB,
            InputKind::TraceBuffer => 256 * MIB,
            InputKind::Elf => 512 * MIB,
            InputKind::TextTable => 16 * MIB,
            // A ring of the largest capacity a ring file may claim (1 GiB), with its directory and heads.
            InputKind::RingFile => 2 * GIB,
        }
    }

    /// Whether files of this kind are decoded as they are read (constant memory) rather than read whole.
    pub const fn streamed(self) -> bool {
        matches!(
            self,
            InputKind::FrameFile | InputKind::TraceStream | InputKind::RingFile
        )
    }

    /// What a file of this kind is, for messages ("a capture document").
    pub const fn what(self) -> &'static str {
        match self {
            InputKind::CaptureDocument => "a capture document",
            InputKind::EventsXml => "an events XML file",
            InputKind::CapturedXml => "a captured.xml file",
            InputKind::FrameFile => "a frame file",
            InputKind::TraceStream => "a trace stream",
            InputKind::TraceBuffer => "a trace buffer",
            InputKind::Elf => "an ELF image",
            InputKind::TextTable => "a text table",
            InputKind::RingFile => "a trace ring file",
        }
    }
}

impl fmt::Display for InputKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.what())
    }
}

/// `bytes` as people write sizes: `512 MiB`, `64 GiB`, `3000 bytes`.
pub(crate) fn size_text(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (scale, unit) in UNITS {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{} {unit}", bytes / scale);
        }
    }
    for (scale, unit) in UNITS {
        if bytes >= scale {
            return format!("{:.1} {unit}", bytes as f64 / scale as f64);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size_text(512 << 20), "512 MiB");
        assert_eq!(size_text(64 << 30), "64 GiB");
        assert_eq!(size_text(3000), "2.9 KiB");
        assert_eq!(size_text(7), "7 bytes");
    }

    #[test]
    fn whole_inputs_are_bounded_below_a_gibibyte() {
        for kind in InputKind::ALL {
            if !kind.streamed() {
                assert!(kind.default_limit() <= 1 << 30, "{kind}");
            }
        }
    }
}
